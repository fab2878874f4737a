use super::*;

#[test]
fn stale_sessions_are_those_of_dead_processes() {
    let mut c = Command::new("true").spawn().unwrap();
    let gone = c.id();
    c.wait().unwrap();
    let me = std::process::id();
    let list = format!(
        "Available recording sessions:\n  1) foo [inactive]\n    Trace output: /root/lttng-traces/foo\n\n  \
         2) tracebench-20261125T094059Z-77-{gone} [inactive snapshot]\n  3) tracebench-{me} [active snapshot]\n\n\
         Use lttng list <session_name> for more details\n"
    );
    assert_eq!(stale_sessions(&list), vec![format!("tracebench-20261125T094059Z-77-{gone}")]);
}

#[test]
fn buffer_geometry_is_checked() {
    assert_eq!(check_buffer(None, None).unwrap().1, 8192);
    assert!(check_buffer(Some("3"), None).unwrap_err().contains("power of two"));
    assert!(check_buffer(Some("12k"), None).unwrap_err().contains("power of two"));
    assert!(check_buffer(Some("16k"), Some(1)).unwrap_err().contains("at least 2"));
    assert_eq!(check_buffer(Some("1M"), Some(4)).unwrap(), ("1M".to_string(), 1 << 20, 4));
}

#[test]
fn sizes() {
    assert_eq!(parse_size("8k"), Some(8192));
    assert_eq!(parse_size("16K"), Some(16384));
    assert_eq!(parse_size("1M"), Some(1 << 20));
    assert_eq!(parse_size("4096"), Some(4096));
    assert_eq!(parse_size("k"), None);
    assert_eq!(parse_size("0"), None);
    assert_eq!(parse_size("x8k"), None);
}

#[test]
fn geometry_from_packets() {
    let text = "{Trace 0, Stream class ID 0, Stream ID 0}\nPacket beginning:\n  Context:\n    cpu_id: 0\n\n\
                {Trace 0, Stream class ID 0, Stream ID 1}\nPacket beginning:\n  Context:\n    cpu_id: 1\n\n\
                {Trace 0, Stream class ID 0, Stream ID 1}\nPacket end\n"
        .to_string()
        + &"{Trace 0, Stream class ID 0, Stream ID 0}\nEvent `tracebench:event` (Class ID 0):\n".repeat(810)
        + "{Trace 0, Stream class ID 0, Stream ID 0}\nPacket end\n{Trace 0, Stream class ID 0, Stream ID 0}\nPacket beginning:\n  Context:\n    cpu_id: 0\n"
        + &"{Trace 0, Stream class ID 0, Stream ID 0}\nEvent `tracebench:event` (Class ID 0):\n".repeat(570)
        + "{Trace 0, Stream class ID 0, Stream ID 0}\nPacket end\n";
    let counts = parse_packet_events(&text);
    assert_eq!(counts[&0], vec![810, 570]);
    assert_eq!(counts[&1], vec![0]);
    // As in a real 8 KiB snapshot: content 65472 and 46272 bits, an empty packet of 672.
    let mut packets = vec![
        Packet { cpu: 0, seq: 4, content_bytes: 5784, events: 0 },
        Packet { cpu: 0, seq: 3, content_bytes: 8184, events: 0 },
        Packet { cpu: 1, seq: 0, content_bytes: 84, events: 0 },
    ];
    let g = geometry_of(&mut packets, &counts, 8192);
    assert_eq!(g["events_per_subbuf"], 810);
    assert_eq!(g["header_bytes"], 84.0);
    assert!((g["event_bytes"].as_f64().unwrap() - 10.0).abs() < 1e-9, "{g}");
}

#[test]
fn parses_babeltrace_lines() {
    let text = "[17:02:03.490842017] (+?.?????????) vm tracebench:event: { cpu_id = 1 }, { payload = 4050 }\n\
                [17:02:03.490843720] (+0.000001703) vm tracebench:event: { cpu_id = 1 }, { payload = 4051 }\n\
                [17:02:03.490843720] (+0.000001703) vm tracebench:event: { cpu_id = 0 }, { payload = 4294967295 }\n";
    let m = parse_babeltrace(text, Mode::Tracepoint);
    assert_eq!(m[&1].payloads, vec![4050, 4051]);
    assert!(!m[&1].sentinel_present);
    assert!(m[&0].sentinel_present);
    let t = "[x] vm lttng_ust_tracef:event: { cpu_id = 0 }, { _msg_length = 2, msg = \"42\" }\n\
             [x] vm lttng_ust_tracef:event: { cpu_id = 0 }, { _msg_length = 2, msg = \"-1\" }\n";
    let m = parse_babeltrace(t, Mode::Tracef);
    assert_eq!(m[&0].payloads, vec![42, -1]);
    assert!(m[&0].sentinel_present);
}
