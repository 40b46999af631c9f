# Sourced by the end-to-end scripts that run PyTorch trials: Debian's python3-torch, installed
# here when missing (as root, with apt); exit 77 (skipped) where it cannot be had. Needs `fail`.
if ! /usr/bin/python3 -c "import torch.distributed as d; assert d.is_gloo_available()" 2> /dev/null; then
  [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null || { echo "SKIPPED: no python3-torch, and not root to install it"; exit 77; }
  echo "installing python3-torch (Debian package)"
  torch_log=$(mktemp)
  DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=600 --no-install-recommends python3-torch > "$torch_log" 2>&1 ||
    { apt-get update > /dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -o DPkg::Lock::Timeout=600 --no-install-recommends python3-torch > "$torch_log" 2>&1; } ||
    { cat "$torch_log" >&2; fail "cannot install python3-torch"; }
  rm -f "$torch_log"
fi
