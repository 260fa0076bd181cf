"""dy2stc.testing - the eager-vs-compiled comparison for pytest.

    import dy2stc.testing
    def test_cnn():
        dy2stc.testing.assert_compiled_matches("cnn.onnx", {"input.1": x}, rtol=1e-4)
"""
from ._check import check

__all__ = ["assert_compiled_matches"]


def assert_compiled_matches(model, feeds, rtol=1e-5, atol=1e-6, **options):
    """Assert that the compiled code (dy2stc.compile with options) gives the
    static executor's outputs on feeds within atol + rtol * |expected|
    (`dy2stc check`'s rule); an AssertionError names each output that does
    not, with its error. Returns {output: OutputError}."""
    errors = check(model, feeds, rtol, atol, **options)
    bad = [f"output '{name}': {e.n_bad} elements beyond atol {atol:g} + rtol {rtol:g} "
           f"(max abs err {e.max_abs:.3g}, max rel err {e.max_rel:.3g}, worst at flat "
           f"index {e.worst})" for name, e in errors.items() if not e.ok]
    if bad:
        raise AssertionError("compiled code differs from the static executor: " +
                             "; ".join(bad))
    return errors
