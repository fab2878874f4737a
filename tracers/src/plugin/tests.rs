use super::*;

#[test]
fn parses_path_and_args() {
    let s = PluginSpec::parse("plugin:/x/lib.so").unwrap();
    assert_eq!(s, PluginSpec { path: "/x/lib.so".into(), args: None });
    let s = PluginSpec::parse("plugin:/x/lib.so:size=64:clock=tsc").unwrap();
    assert_eq!(s.args.as_deref(), Some("size=64:clock=tsc"));
    let s = PluginSpec::parse("plugin:lib.so:").unwrap();
    assert_eq!(s.args.as_deref(), Some(""));
    assert!(matches!(PluginSpec::parse("plugin:"), Err(PluginError::Spec { .. })));
    assert!(matches!(PluginSpec::parse("plugin::x"), Err(PluginError::Spec { .. })));
}

#[test]
fn missing_file_names_the_file() {
    let e = validate("plugin:/nonexistent/libnope.so").unwrap_err().to_string();
    assert!(e.contains("/nonexistent/libnope.so") && e.contains("no such file"), "{e}");
}

#[test]
fn not_a_shared_object_is_a_load_error() {
    // mkdtemp: a random name, made exclusively, mode 0700 (a pid-named directory in /tmp could be
    // planted by another user first).
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let f = dir.join("garbage.so");
    std::fs::write(&f, b"not an ELF file").unwrap();
    let spec = format!("plugin:{}", f.display());
    let e = validate(&spec).unwrap_err().to_string();
    assert!(e.contains("garbage.so") && e.contains("dlopen failed"), "{e}");
    drop(tmp);
}

#[test]
fn vtable_layout_matches_the_header() {
    // 4 + pad, then 7 pointers: 64 bytes on LP64, as the C compiler lays it out.
    assert_eq!(std::mem::size_of::<TracerV1>(), 64);
    assert_eq!(std::mem::offset_of!(TracerV1, fire), 48);
    // v2: the v1 struct, then u32 + pad and two pointers.
    assert_eq!(std::mem::offset_of!(TracerV2, max_payload), 64);
    assert_eq!(std::mem::offset_of!(TracerV2, fire_bytes), 72);
    assert_eq!(std::mem::offset_of!(TracerV2, buffer_events_for), 80);
    assert_eq!(std::mem::size_of::<TracerV2>(), 88);
    // Tracer::fire reads the first two words of Plugin.
    assert_eq!(std::mem::offset_of!(Plugin, ctx), 0);
    assert_eq!(std::mem::offset_of!(Plugin, fire), 8);
}
