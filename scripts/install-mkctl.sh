#!/usr/bin/env bash
# Puts `mkctl` on the PATH for this checkout (run by `make up`): the npm workspace bin link
# (node_modules/.bin/mkctl, so `npx mkctl` works from the checkout) and a link in the first
# writable PATH directory of /usr/local/bin and ~/.local/bin. The links point at this checkout's
# mkctl/dist/main.js, so they follow rebuilds; the last checkout that ran `make up` owns them.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
main="$root/mkctl/dist/main.js"
[ -f "$main" ] || { echo "install-mkctl: $main is missing (run make build)" >&2; exit 1; }
chmod +x "$main"
mkdir -p "$root/node_modules/.bin"
ln -sfn "$main" "$root/node_modules/.bin/mkctl"
for dir in /usr/local/bin "$HOME/.local/bin"; do
  if [ -d "$dir" ] && [ -w "$dir" ] && [[ ":$PATH:" == *":$dir:"* ]]; then
    ln -sfn "$main" "$dir/mkctl"
    echo "mkctl: $dir/mkctl -> $main"
    exit 0
  fi
done
echo "mkctl: no writable directory on the PATH; use npx mkctl from $root" >&2
