# Thin wrapper over CMake: the README's two commands.
#   make demo   set up, build, run SimpleNet eager -> save -> compile -> run
#   make test   set up, build with gcc and run every test (CUnit under ctest),
#               build once more as gcc Release (-O3, whose flow analysis
#               warns where -O2 does not), then build with clang under
#               AddressSanitizer + UndefinedBehaviorSanitizer and run every
#               test again, with a 15-second libFuzzer run of each fuzz
#               target of tests/fuzz (so the code is warning-free under both
#               compilers, -Werror)
BUILD    ?= build
BUILD_SAN ?= build-san
BUILD_REL ?= build-rel
JOBS     ?= $(shell nproc)

.PHONY: setup build demo test test-fast clean

setup:
	@sh scripts/setup.sh

build: setup
	cmake -S . -B $(BUILD) -DDY_WERROR=ON >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	sh scripts/demo.sh $(BUILD)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	cmake -S . -B $(BUILD_REL) -DDY_WERROR=ON -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD_REL) -j $(JOBS)
	CC=clang cmake -S . -B $(BUILD_SAN) -DDY_WERROR=ON -DDY_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
	cmake --build $(BUILD_SAN) -j $(JOBS)
	cd $(BUILD_SAN) && ctest --output-on-failure -j $(JOBS)

test-fast: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD) $(BUILD_SAN) $(BUILD_REL)
