#!/usr/bin/env bash
# An image without a registry or a Docker daemon: one static binary in one
# layer, written as a docker-archive tarball (what `docker save` writes and
# `docker load`, `ctr images import` and `podman load` read).
#
#   bench/k8s/image.sh agent OUT.tar [NAME]   benchbook's agent (cmd/benchbook-agent)
#   bench/k8s/image.sh pause OUT.tar [NAME]   the cluster's sandbox (bench/k8s/pause)
#
# prints the image's reference, NAME:TAG, where TAG is the first 12 hex
# digits of the layer's SHA-256: another build of the agent is another tag,
# so a cluster never runs a stale agent under a name it already has. The
# agent image is what builtins/workload/fleet/kube/deploy/Dockerfile builds
# (the same binary, as the same user, 65532, with the same entrypoint),
# without its base image.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
[ $# -ge 2 ] || { echo "usage: $0 agent|pause OUT.tar [NAME]" >&2; exit 2; }
kind=$1 out=$2

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
mkdir -p "$root/etc" "$root/tmp"
chmod 1777 "$root/tmp"
export CGO_ENABLED=0
case $kind in
agent)
	name=${3:-benchbook.local/benchbook-agent}
	entry=/usr/local/bin/benchbook-agent user=65532
	(cd "$repo" && go build -trimpath -o "$root$entry" ./cmd/benchbook-agent) ;;
pause)
	name=${3:-benchbook.local/pause}
	entry=/pause user=65535
	(cd "$here" && go build -trimpath -o "$root$entry" ./pause) ;;
*)
	echo "$0: unknown image $kind (want agent or pause)" >&2; exit 2 ;;
esac
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%s:%s:nonroot:/tmp:/sbin/nologin\n' "$user" "$user" >"$root/etc/passwd"
printf 'root:x:0:\nnonroot:x:%s:\n' "$user" >"$root/etc/group"

# One layer, the same bytes for the same binary: sorted names, owner root,
# one fixed time.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$root" -cf "$work/layer.tar" \
	$(cd "$root" && ls -A)
diff=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
tag=${diff:0:12}
mkdir "$work/$diff"
mv "$work/layer.tar" "$work/$diff/layer.tar"
printf '{"architecture":"%s","os":"linux","config":{"User":"%s:%s","Entrypoint":["%s"],"Env":["PATH=/usr/local/bin:/usr/bin:/bin"],"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
	"$(go env GOARCH)" "$user" "$user" "$entry" "$diff" >"$work/config.json"
config=$(sha256sum "$work/config.json" | cut -d' ' -f1).json
mv "$work/config.json" "$work/$config"
printf '[{"Config":"%s","RepoTags":["%s:%s"],"Layers":["%s/layer.tar"]}]' "$config" "$name" "$tag" "$diff" >"$work/manifest.json"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$work" -cf "$out" manifest.json "$config" "$diff"
echo "$name:$tag"
