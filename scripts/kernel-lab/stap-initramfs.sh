# Sourced by lab.sh (IR, BUILD, STROOT, add_bin are set): the SystemTap probe module built on the host, and the
# downloaded staprun/stapio that load and drain it in the guest.
cp "$BUILD/kbench_stp.ko" "$IR/lab/kbench_stp.ko"
export LD_LIBRARY_PATH=$STROOT/usr/lib/x86_64-linux-gnu:$STROOT/lib/x86_64-linux-gnu  # for ldd in add_bin
add_bin "$STROOT/usr/bin/staprun" /usr/bin/staprun
add_bin "$STROOT/usr/lib/systemtap/stapio" /usr/lib/systemtap/stapio
unset LD_LIBRARY_PATH
