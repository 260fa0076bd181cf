# embed.cmake - a template of codegen/rt/ as C strings, at build time:
#
#   cmake -DIN=rt/dy_simd.h -DOUT=tpl_simd.c -DNAME=dy_tpl_simd -P embed.cmake
#
# writes OUT, which defines (see codegen/text/templates.h)
#
#   const char *const NAME[]              the template's lines, each with
#                                         its '\n', then NULL
#   const dy_tpl_section NAME_sections[]  {name, first line} per section,
#                                         then {NULL, number of lines}
#
# The text is what lies between the lines
#
#   /* dy2stc: template begin */
#   /* dy2stc: template end */          (optional: else to the end of IN)
#
# so that IN may carry, before and after it, what it needs to compile on
# its own (include guards, #includes, stand-ins for the emitter's
# placeholders), and nothing of that reaches the generated C. Inside the
# text, a line
#
#   /* dy2stc: section NAME */
#
# starts a section (the math library's functions, which are emitted one by
# one); the marker itself is no line of the text. No tools beyond CMake.

cmake_minimum_required(VERSION 3.18) # the policies of the project

foreach(v IN ITEMS IN OUT NAME)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "embed.cmake: -D${v}=... is required")
  endif()
endforeach()

file(READ "${IN}" text)
set(begin_marker "/* dy2stc: template begin */\n")
set(end_marker "/* dy2stc: template end */\n")
set(section_marker "/* dy2stc: section ")

string(FIND "${text}" "${begin_marker}" b)
if(b LESS 0)
  message(FATAL_ERROR "${IN}: no line '/* dy2stc: template begin */'")
endif()
string(LENGTH "${begin_marker}" n)
math(EXPR b "${b} + ${n}")
string(SUBSTRING "${text}" ${b} -1 text)
string(FIND "${text}" "${end_marker}" e)
if(e GREATER_EQUAL 0)
  string(SUBSTRING "${text}" 0 ${e} text)
endif()

# Split off the sections: body holds the text without the markers, and
# sections the C initialisers {"NAME", first line}.
set(body "")
set(sections "")
set(lines 0)
while(TRUE)
  string(FIND "${text}" "${section_marker}" s)
  if(s LESS 0)
    string(APPEND body "${text}")
    break()
  endif()
  if(s GREATER 0)
    math(EXPR before "${s} - 1")
    string(SUBSTRING "${text}" ${before} 1 c)
    if(NOT c STREQUAL "\n")
      message(FATAL_ERROR "${IN}: a section marker must start its line")
    endif()
  endif()
  string(SUBSTRING "${text}" 0 ${s} head)
  string(APPEND body "${head}")
  string(REGEX MATCHALL "\n" nl "${head}")
  list(LENGTH nl k)
  math(EXPR lines "${lines} + ${k}")
  string(SUBSTRING "${text}" ${s} -1 text)
  string(FIND "${text}" "\n" eol)
  string(SUBSTRING "${text}" 0 ${eol} marker)
  if(NOT marker MATCHES "^/\\* dy2stc: section ([A-Za-z_][A-Za-z0-9_]*) \\*/$")
    message(FATAL_ERROR "${IN}: malformed section marker '${marker}'")
  endif()
  string(APPEND sections "  {\"${CMAKE_MATCH_1}\", ${lines}},\n")
  math(EXPR eol "${eol} + 1")
  string(SUBSTRING "${text}" ${eol} -1 text)
endwhile()
string(REGEX MATCHALL "\n" nl "${body}")
list(LENGTH nl total)
if(NOT body MATCHES "\n$")
  message(FATAL_ERROR "${IN}: the template text must end with a newline")
endif()

# Each line as a C string literal: \ and " escaped, no trigraph left.
string(REPLACE "\\" "\\\\" body "${body}")
string(REPLACE "\"" "\\\"" body "${body}")
string(REPLACE "??" "?\\?" body "${body}")
string(REGEX REPLACE "\n$" "" body "${body}")
string(REPLACE "\n" "\\n\",\n    \"" body "${body}")

file(RELATIVE_PATH rel "${CMAKE_CURRENT_LIST_DIR}/../.." "${IN}")
file(WRITE "${OUT}"
  "/* Generated from ${rel} by codegen/rt/embed.cmake. Do not edit. */\n"
  "#include \"templates.h\"\n\n"
  "const char *const ${NAME}[] = {\n"
  "    \"${body}\\n\",\n"
  "    NULL,\n"
  "};\n\n"
  "const dy_tpl_section ${NAME}_sections[] = {\n"
  "${sections}"
  "  {NULL, ${total}},\n"
  "};\n")
