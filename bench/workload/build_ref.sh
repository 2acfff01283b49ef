#!/usr/bin/env bash
# Builds bench/workload (wlbench) as of the commit named in
# testdata/guard_ref.txt (or REFFILE) into OUT: the reference build the
# closed-loop CPU guard runs beside the current one (guard_test.go), or
# compare.sh's untagged build (testdata/tags_ref.txt). The tree comes out
# of git (git archive), so neither the work tree nor .git changes.
#
#   bench/workload/build_ref.sh OUT [REFFILE]
set -euo pipefail
out=$(realpath -m "${1:?usage: build_ref.sh OUT [REFFILE]}")
reffile=$(realpath -m "${2:-$(dirname "$0")/testdata/guard_ref.txt}")
cd "$(dirname "$0")/../.."
ref=$(grep -v '^#' "$reffile" | head -1 | tr -d '[:space:]')
# A shallow clone may fetch the rest of its history.
if ! git cat-file -e "$ref^{commit}" 2>/dev/null && [ "$(git rev-parse --is-shallow-repository 2>/dev/null)" = true ]; then
	git fetch -q --unshallow 2>/dev/null || true
fi
git cat-file -e "$ref^{commit}" 2>/dev/null || {
	echo "build_ref.sh: commit $ref ($reffile) is not in this clone's history" >&2
	exit 1
}
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
git archive "$ref" | tar -x -C "$src"
(cd "$src" && go build -o "$out" ./bench/workload)
