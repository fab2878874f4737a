# Shared by the benchmark scripts (sentinel-cost.sh, footprint.sh): source it, then
#   TRACERS=$(default_tracers NAME BIN)
# prints none,lw,printf and lttng-ust when `BIN list` says lttng-ust can run here; otherwise it
# says on stderr, under NAME, that lttng-ust is left out and why to look.
default_tracers() {
  local name=$1 bin=$2 t=none,lw,printf
  if "$bin" list 2>/dev/null | grep -Eq '^lttng-ust +available'; then
    t=$t,lttng-ust
  else
    echo "$name: lttng-ust cannot run here (see \`tracebench list\`); measuring $t" >&2
  fi
  echo "$t"
}
