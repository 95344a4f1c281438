module cochan/benchmarks/peers/go

go 1.19
