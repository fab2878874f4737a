//! `none`: an empty, non-inlined call. Its latency is the floor that every other row sits on
//! (survey Tables 3 and 4, row "None").
use crate::Tracer;

pub struct NoneTracer;

impl Tracer for NoneTracer {
    fn name(&self) -> &str {
        "none"
    }
    fn version(&self) -> String {
        env!("CARGO_PKG_VERSION").into()
    }
    fn config(&self) -> serde_json::Value {
        serde_json::json!({"kind": "empty call"})
    }
    #[inline(never)]
    fn fire(&self, payload: u32) {
        // Keep the argument live so the call is a real call with a real argument.
        core::hint::black_box(payload);
    }
}
