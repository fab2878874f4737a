# Sourced by lab.sh (IR, KVER, BUILD, add_bin, log are set): put lttng-modules, kbench's LTTng probe, lttng-tools
# and babeltrace2 (the host's, bookworm) into the initramfs.
LM=$IR/lib/modules/$KVER/extra/lttng
mkdir -p "$LM"
find "$BUILD/lttng-modules/src" -name '*.ko' -exec cp {} "$LM/" \;
cp "$BUILD/lttng-probe-kbench/lttng-probe-kbench.ko" "$LM/"
strip --strip-debug "$LM"/*.ko
for b in lttng lttng-sessiond babeltrace2; do
    if command -v $b >/dev/null; then add_bin "$(command -v $b)" /usr/bin/$b; else log "lttng: $b missing on the host"; fi
done
CONSUMERD=/usr/lib/x86_64-linux-gnu/lttng/libexec/lttng-consumerd
[ -x $CONSUMERD ] && add_bin $CONSUMERD
for p in /usr/lib/x86_64-linux-gnu/babeltrace2/plugins/*.so; do [ -e "$p" ] && add_bin "$p"; done
# lttng-sessiond validates session configurations against this schema and needs it even to start.
mkdir -p "$IR/usr/share/xml/lttng"
cp /usr/share/xml/lttng/session.xsd "$IR/usr/share/xml/lttng/" 2>/dev/null || log "lttng: /usr/share/xml/lttng/session.xsd missing"
