//! Reading a snapshot back: the CTF packets (sub-buffers) of each stream file, babeltrace2's text,
//! and the buffer geometry the code-path analysis compares its periods with (survey 7.1: the
//! slow path every SUB-BUFFER_SIZE / EVENT_SIZE events).
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use super::*;
/// CTF packet magic, and where LTTng-UST's 64-bit packet header and context keep the fields read
/// here (bytes): magic u32 @0, then after uuid, stream_id and stream_instance_id the context
/// timestamp_begin @32, timestamp_end @40, content_size @48 and packet_size @56 (bits),
/// packet_seq_num @64, events_discarded @72, cpu_id @80. Reading stops at a packet whose magic
/// or sizes do not fit, so a layout change yields no geometry (packets fail to pair up with
/// babeltrace2's) rather than a wrong one.
pub(super) const CTF_MAGIC: u32 = 0xC1FC_1FC1;

/// One packet (sub-buffer) of a snapshot stream file.
#[derive(Debug, Clone, PartialEq)]
pub struct Packet {
    pub cpu: u32,
    pub seq: u64,
    pub content_bytes: u64,
    pub events: u64,
}

pub(super) fn u64_at(b: &[u8], off: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(off..off + 8)?.try_into().ok()?))
}

/// Packets of the stream files under `dir` (every file but `metadata` and the index files).
pub(super) fn read_packets(dir: &Path, subbuf_bytes: u64, out: &mut Vec<Packet>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            read_packets(&p, subbuf_bytes, out);
            continue;
        }
        if p.file_name().is_some_and(|n| n == "metadata") || p.extension().is_some_and(|x| x == "idx") {
            continue;
        }
        let Ok(b) = std::fs::read(&p) else { continue };
        // Packets follow each other, each `packet_size` long: a snapshot trims the packet being
        // written (and an empty one) to whole pages, so sizes vary.
        let mut off = 0usize;
        while off < b.len() {
            let chunk = &b[off..];
            let magic = chunk.get(0..4).map(|m| u32::from_le_bytes(m.try_into().unwrap()));
            let (Some(content), Some(size), Some(seq)) = (u64_at(chunk, 48), u64_at(chunk, 56), u64_at(chunk, 64))
            else {
                break;
            };
            let cpu = chunk.get(80..84).map(|c| u32::from_le_bytes(c.try_into().unwrap()));
            if magic != Some(CTF_MAGIC) || size == 0 || size % 8 != 0 || size > subbuf_bytes * 8 || content > size {
                break;
            }
            out.push(Packet { cpu: cpu.unwrap_or(0), seq, content_bytes: content / 8, events: 0 });
            off += (size / 8) as usize;
        }
    }
}

/// Events per packet, per CPU, in trace order, from babeltrace2's `sink.text.details` output.
pub fn parse_packet_events(text: &str) -> BTreeMap<u32, Vec<u64>> {
    let mut out: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
    // Streams interleave in time order: keep the open packet of each stream (by its id line).
    let mut open: BTreeMap<String, (Option<u32>, u64)> = BTreeMap::new();
    let mut stream = String::new();
    let mut want_cpu = false;
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with('{') && l.contains("Stream ID") {
            stream = l.to_string();
        } else if l.starts_with("Packet beginning") {
            open.insert(stream.clone(), (None, 0));
            want_cpu = true;
        } else if want_cpu && l.starts_with("cpu_id:") {
            if let Some(p) = open.get_mut(&stream) {
                p.0 = l["cpu_id:".len()..].trim().parse().ok();
            }
            want_cpu = false;
        } else if l.starts_with("Event `") {
            want_cpu = false;
            if let Some(p) = open.get_mut(&stream) {
                p.1 += 1;
            }
        } else if l.starts_with("Packet end") {
            if let Some((Some(cpu), n)) = open.remove(&stream) {
                out.entry(cpu).or_default().push(n);
            }
        }
    }
    out
}

/// The buffer geometry a snapshot shows (survey section 7.1: the slow path comes every
/// SUB-BUFFER_SIZE / EVENT_SIZE events): each packet's content size from its CTF header and its
/// event count from babeltrace2, hence the event size, the packet header's size and the events a
/// full sub-buffer holds, which is the period the report expects for the sub-buffer switch.
pub fn geometry(dir: &Path, subbuf_bytes: u64, details: std::io::Result<std::process::Output>) -> serde_json::Value {
    let mut packets = Vec::new();
    read_packets(dir, subbuf_bytes, &mut packets);
    let text = match details {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        Ok(o) => {
            return serde_json::json!({"error": format!("babeltrace2 details: {}", String::from_utf8_lossy(&o.stderr).trim())})
        }
        Err(e) => return serde_json::json!({"error": format!("cannot run babeltrace2: {e}")}),
    };
    geometry_of(&mut packets, &parse_packet_events(&text), subbuf_bytes)
}

/// Starts babeltrace2's `sink.text.details` on a snapshot directory: the per-packet event counts
/// [`geometry`] pairs with the stream files. Started before the plain read of the same snapshot so
/// that the two processes' start-up (about 10 ms each here) overlaps.
pub fn spawn_details(dir: &Path) -> std::io::Result<std::process::Child> {
    Command::new("babeltrace2")
        .args(["-c", "sink.text.details", "-p", "with-metadata=false,with-time=false"])
        .arg(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
}

/// [`geometry`] from parsed packets and per-CPU event counts (packets of one CPU pair up in
/// sequence-number order, which is trace order).
pub fn geometry_of(packets: &mut [Packet], counts: &BTreeMap<u32, Vec<u64>>, subbuf_bytes: u64) -> serde_json::Value {
    packets.sort_by_key(|p| (p.cpu, p.seq));
    let mut by_cpu: BTreeMap<u32, Vec<&mut Packet>> = BTreeMap::new();
    for p in packets.iter_mut() {
        by_cpu.entry(p.cpu).or_default().push(p);
    }
    // A CPU whose packets do not pair up one to one is left out (no guess).
    let unpaired: Vec<u32> = by_cpu
        .iter()
        .filter(|(cpu, ps)| counts.get(cpu).map(Vec::len).unwrap_or(0) != ps.len())
        .map(|(c, _)| *c)
        .collect();
    by_cpu.retain(|c, _| !unpaired.contains(c));
    for (cpu, ps) in by_cpu.iter_mut() {
        for (p, n) in ps.iter_mut().zip(&counts[cpu]) {
            p.events = *n;
        }
    }
    if by_cpu.is_empty() {
        return serde_json::json!({
            "error": "packets in the stream files and in babeltrace2's output do not pair up",
            "file_packets": packets.len(),
            "babeltrace_packets": counts.values().map(Vec::len).sum::<usize>(),
        });
    }
    // Full packets: all but the last of each CPU's stream (the one being written).
    let mut full: Vec<(u64, u64)> = Vec::new();
    let mut all: Vec<(u64, u64)> = Vec::new();
    for ps in by_cpu.values() {
        for (i, p) in ps.iter().enumerate() {
            all.push((p.events, p.content_bytes));
            if i + 1 < ps.len() && p.events > 0 {
                full.push((p.events, p.content_bytes));
            }
        }
    }
    // The header: an empty packet's content, else a straight line through packets of different
    // event counts.
    let header = all.iter().filter(|p| p.0 == 0).map(|p| p.1).min().map(|h| h as f64).or_else(|| {
        let lo = all.iter().filter(|p| p.0 > 0).min_by_key(|p| p.0)?;
        let hi = all.iter().max_by_key(|p| p.0)?;
        (hi.0 > lo.0).then(|| {
            let slope = (hi.1 as f64 - lo.1 as f64) / (hi.0 - lo.0) as f64;
            lo.1 as f64 - slope * lo.0 as f64
        })
    });
    let mut per: Vec<u64> = full.iter().map(|p| p.0).collect();
    per.sort_unstable();
    let Some(&median) = per.get(per.len() / 2) else {
        return serde_json::json!({"error": "no full sub-buffer in the snapshot (run more calls)", "packets": all.len()});
    };
    let h = header.unwrap_or(0.0);
    let (ev, cb): (u64, u64) = full.iter().fold((0, 0), |a, p| (a.0 + p.0, a.1 + p.1));
    let event_bytes = (cb as f64 - h * full.len() as f64) / ev as f64;
    serde_json::json!({
        "subbuf_bytes": subbuf_bytes,
        "full_subbufs": full.len(),
        "events_per_subbuf": median,
        "events_per_subbuf_all": per,
        "event_bytes": event_bytes,
        "header_bytes": header,
        "cpus_left_out": unpaired,
        "how": "content_size of each packet from its CTF header, events per packet from babeltrace2 sink.text.details; \
                a full sub-buffer is any packet but the last of its CPU's stream",
    })
}

/// Parses babeltrace2's text output: `... tracebench:event: { cpu_id = 1 }, { payload = 42 }` or
/// `... lttng_ust_tracef:event: { cpu_id = 0 }, { _msg_length = 2, msg = "42" }`.
pub fn parse_babeltrace(text: &str, mode: Mode) -> BTreeMap<u32, CpuSnapshot> {
    let mut cpus: BTreeMap<u32, CpuSnapshot> = BTreeMap::new();
    let (marker, key) = match mode {
        Mode::Tracepoint => ("tracebench:event:", "payload = "),
        Mode::Tracef => ("lttng_ust_tracef:event:", "msg = \""),
    };
    for line in text.lines() {
        if let Some((len, ok)) = blob_of(line, mode) {
            let c = cpus.entry(field(line, "cpu_id = ").and_then(|v| v.parse::<u32>().ok()).unwrap_or(0)).or_default();
            c.blobs_match = if c.blobs == 0 { ok } else { c.blobs_match && ok };
            c.blobs += 1;
            c.events += 1;
            c.last_blob_len = Some(len);
            continue;
        }
        if !line.contains(marker) {
            continue;
        }
        let cpu = field(line, "cpu_id = ").and_then(|v| v.parse::<u32>().ok());
        let payload = field(line, key).and_then(|v| v.parse::<i64>().ok());
        if let (Some(cpu), Some(p)) = (cpu, payload) {
            let c = cpus.entry(cpu).or_default();
            c.events += 1;
            c.payloads.push(p);
            // tracef formats with %d, so the sentinel u32::MAX reads back as -1.
            if p == SENTINEL as i64 || p == -1 {
                c.sentinel_present = true;
            }
        }
    }
    cpus
}

/// A `--payload-size` event's (length, whether its bytes are the payload's `abc...`):
/// `tracebench:blob: { cpu_id = 0 }, { _data_length = 5, data = "abcde" }`, or a tracef event
/// whose message is not a number.
pub(super) fn blob_of(line: &str, mode: Mode) -> Option<(usize, bool)> {
    let (marker, key) = match mode {
        Mode::Tracepoint => ("tracebench:blob:", "data = \""),
        Mode::Tracef => ("lttng_ust_tracef:event:", "msg = \""),
    };
    if !line.contains(marker) {
        return None;
    }
    let start = line.find(key)? + key.len();
    let rest = &line[start..];
    let text = &rest[..rest.find('"')?];
    if mode == Mode::Tracef && text.parse::<i64>().is_ok() {
        return None;
    }
    let ok = text.bytes().enumerate().all(|(i, b)| b == b'a' + (i % 26) as u8);
    Some((text.len(), ok))
}

pub(super) fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let start = line.find(key)? + key.len();
    let rest = &line[start..];
    let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '-')).unwrap_or(rest.len());
    Some(&rest[..end])
}
