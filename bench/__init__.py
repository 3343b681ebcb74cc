"""Performance benchmarks (throughput, makespan, overhead) and the loopback mock provider they use."""
