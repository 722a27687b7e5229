#!/usr/bin/env bash
# The ctest entry install_and_embed: installs this build into a temporary prefix, builds
# samples/embed against it as a separate CMake project (find_package(irrun)), runs it on
# samples/avgpool_v11.xml and compares its output. Leaves nothing behind but what it printed.
#   tests/install_test.sh src=DIR build=DIR cmake=CMAKE generator=GEN cxx=CXX type=BUILD_TYPE \
#     flags=CXX_FLAGS ldflags=EXE_LINKER_FLAGS
set -euo pipefail
declare -A arg
for a in "$@"; do arg[${a%%=*}]=${a#*=}; done
cmake=${arg[cmake]}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/irrun-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

"$cmake" --install "${arg[build]}" --prefix "$prefix" >"$tmp/install.log" ||
  { cat "$tmp/install.log"; exit 1; }
# Only the public headers are installed, and the tool.
find "$prefix/include" -type f -printf '%P\n' | sort >"$tmp/headers.txt"
printf '%s\n' irrun/diagnostic.hpp irrun/element_type.hpp irrun/error.hpp irrun/irrun.hpp \
  irrun/network.hpp irrun/tensor.hpp irrun/version.hpp | diff -u - "$tmp/headers.txt"
[[ $("$prefix/bin/irrun" --version) == "irrun "[0-9]* ]] || { echo "bin/irrun --version" >&2; exit 1; }
[[ $("$prefix/bin/irrun" check "${arg[src]}/samples/avgpool_v11.xml") == *": ok: 3 layer(s) "* ]] ||
  { echo "bin/irrun check failed" >&2; exit 1; }
# Each public header compiles on its own (it includes what it uses, and only public headers).
for h in $(cat "$tmp/headers.txt"); do
  echo "#include <$h>" >"$tmp/header.cpp"
  # shellcheck disable=SC2086  # the flags are a list
  "${arg[cxx]}" -std=c++20 ${arg[flags]} -Wall -Wextra -Wpedantic -Werror -fsyntax-only \
    -I "$prefix/include" "$tmp/header.cpp" || { echo "$h does not compile alone" >&2; exit 1; }
done

# The package needs neither Eigen nor nlohmann_json (header-only, in no installed header) nor
# spdlog (the tool's): the user's configure below cannot find them.
if grep -rlE --include='irrun*.cmake' 'Eigen3|spdlog|nlohmann' "$prefix"; then
  echo "the installed CMake package names Eigen, nlohmann_json or spdlog" >&2
  exit 1
fi

# A shared libirrun exports the public API alone (the public headers' visibility pragma): none of
# its internals, nor the Eigen and pugixml code compiled into it. A new public function belongs
# in this list.
shopt -s nullglob
for so in "$prefix"/lib*/libirrun.so; do
  public='irrun::(Network|CheckResult|Tensor|Buffer|Error|ModelError|Diagnostic|version|to_string|'
  public+='bit_width|packed_byte_size|is_floating|parse_precision|parse_element_type_name|'
  public+='format_bytes|memory_limit|set_memory_limit|memory_in_use|require_memory|'
  public+='default_memory_limit|parse_memory_size)\b'
  symbols=$(nm -D --defined-only -C "$so")
  if grep -E 'Eigen|pugi|irrun::' <<<"$symbols" | grep -vE "$public"; then
    echo "$so exports the symbols above, which are not irrun's public API" >&2
    exit 1
  fi
  [[ $symbols == *"irrun::Network::load("* ]] ||
    { echo "$so does not export irrun::Network::load" >&2; exit 1; }
done
shopt -u nullglob

# Same compiler and flags as this build: a sanitized libirrun.a needs a sanitized link.
"$cmake" -S "${arg[src]}/samples/embed" -B "$tmp/embed" -G "${arg[generator]}" \
  -DCMAKE_CXX_COMPILER="${arg[cxx]}" -DCMAKE_BUILD_TYPE="${arg[type]}" \
  -DCMAKE_CXX_FLAGS="${arg[flags]} -Wall -Wextra -Wpedantic -Werror" \
  -DCMAKE_EXE_LINKER_FLAGS="${arg[ldflags]}" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_DISABLE_FIND_PACKAGE_Eigen3=ON -DCMAKE_DISABLE_FIND_PACKAGE_spdlog=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_nlohmann_json=ON \
  -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON >"$tmp/configure.log" ||
  { cat "$tmp/configure.log"; exit 1; }
"$cmake" --build "$tmp/embed" >"$tmp/build.log" || { cat "$tmp/build.log"; exit 1; }

"$tmp/embed/embed" "${arg[src]}/samples/avgpool_v11.xml" >"$tmp/out.txt"
cat "$tmp/out.txt"
# AvgPool k3 s2 p1 exclude-pad ceil over 8*row+col: the mean row times 8 plus the mean col,
# each 0.5 (rows 0-1), 2, 4, 6 or 7 (row 7 alone, the ceil window).
diff -u - <(tail -n +2 "$tmp/out.txt") <<'OUT'
check: 3 layer(s) checked, 0 error(s), 0 warning(s)
pool: 1 3 5 5
 4.5 6 8 10 11
 16.5 18 20 22 23
 32.5 34 36 38 39
 48.5 50 52 54 55
 56.5 58 60 62 63
OUT
# An error crosses the library's boundary as irrun::Error (a shared libirrun exports its type
# information): the sample returns its code, 3 for a model that is not there, where a
# std::exception would give 1.
code=0
"$tmp/embed/embed" "$tmp/missing.xml" 2>"$tmp/err.txt" || code=$?
[[ $code == 3 && $(cat "$tmp/err.txt") == "error: $tmp/missing.xml"* ]] ||
  { echo "embed on a missing model: exit $code, $(cat "$tmp/err.txt")" >&2; exit 1; }
echo "install_and_embed: ok"
