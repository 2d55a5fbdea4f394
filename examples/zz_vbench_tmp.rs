fn main() {
    let labels: Vec<String> = (0..3).map(|i| format!("BLOCK-{i}")).collect();
    let s2 = format!("{{\"verdicts\": [{}]}}", "{\"block\": 1, \"correct\": true},".repeat(20_000));
    let t = std::time::Instant::now();
    let _ = ldb::debugger::verdicts::parse_verdicts(&s2, &labels);
    println!("closed: {:?}", t.elapsed());
}
