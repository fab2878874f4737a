// SPDX-License-Identifier: MIT OR Apache-2.0
// The `ebpf` backend's program (survey section 5.1.6): on each hit of the probe site's uprobe,
// read the clock and write {ts, payload} into a per-CPU array used as a ring. Nothing reads it
// during the run; the harness reads the map afterwards.
//
// Self-contained: the helpers are declared here by their stable ids instead of via libbpf's
// bpf_helpers.h, so building it needs only clang and the kernel UAPI headers.
#include <linux/types.h>
#include <linux/bpf.h>
#include <asm/ptrace.h>

#define SEC(name) __attribute__((section(name), used))

static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)BPF_FUNC_map_lookup_elem;
static __u64 (*bpf_ktime_get_ns)(void) = (void *)BPF_FUNC_ktime_get_ns;
static long (*bpf_probe_read_user)(void *dst, __u32 size, const void *src) = (void *)BPF_FUNC_probe_read_user;

// 1024 events x 16 bytes = 16 KiB per CPU, the survey's buffer size (section 6.2.3).
#define RING_EVENTS 1024

struct event {
	__u64 ts;
	__u32 payload;
	__u32 pad;
};

struct ring {
	__u64 head;   // events written on this CPU since load (the ring wraps: overwrite mode)
	struct event ev[RING_EVENTS];
};

// BTF-defined map, spelled out (what libbpf's __uint/__type macros expand to).
struct {
	int (*type)[BPF_MAP_TYPE_PERCPU_ARRAY];
	int (*max_entries)[1];
	__u32 *key;
	struct ring *value;
} ring SEC(".maps");

SEC("uprobe")
int tracebench_site(struct pt_regs *ctx)
{
	__u32 key = 0;
	struct ring *r = bpf_map_lookup_elem(&ring, &key);

	if (!r)
		return 0;
	__u64 h = r->head;
	struct event *e = &r->ev[h & (RING_EVENTS - 1)];

	e->ts = bpf_ktime_get_ns();
	e->payload = (__u32)ctx->rdi; // the site's first argument (edi)
	r->head = h + 1;
	return 0;
}

// --payload-size N (N != 4): the site is called with the payload's address in rsi and its length
// in rdx, and `tracebench_site_blob` copies the N bytes from user memory (bpf_probe_read_user) into
// a per-CPU ring of 4 slots of up to BLOB_MAX bytes (16 KiB per CPU again).
#define BLOB_MAX 4096
#define BLOB_SLOTS 4

struct blob_event {
	__u64 ts;
	__u32 len;
	__u32 pad;
	char data[BLOB_MAX];
};

struct blob_ring {
	__u64 head;
	struct blob_event ev[BLOB_SLOTS];
};

struct {
	int (*type)[BPF_MAP_TYPE_PERCPU_ARRAY];
	int (*max_entries)[1];
	__u32 *key;
	struct blob_ring *value;
} blob_ring SEC(".maps");

SEC("uprobe")
int tracebench_site_blob(struct pt_regs *ctx)
{
	__u32 key = 0;
	struct blob_ring *r = bpf_map_lookup_elem(&blob_ring, &key);

	if (!r)
		return 0;
	__u64 h = r->head;
	struct blob_event *e = &r->ev[h & (BLOB_SLOTS - 1)];
	__u64 len = ctx->rdx;

	// Bounded for the verifier: the copy never exceeds the slot.
	if (len > BLOB_MAX)
		len = BLOB_MAX;
	e->ts = bpf_ktime_get_ns();
	e->len = (__u32)len;
	bpf_probe_read_user(e->data, (__u32)len, (const void *)ctx->rsi);
	r->head = h + 1;
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
