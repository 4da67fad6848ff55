# Benchmarks live in the slaq command (`slaq bench ...`) and in bench/*.sh.

# make bench-real [REPS=N]: real PyTorch, scikit-learn and slaq-train jobs
# run plainly, under slaqd fair and under slaqd slaq, in two arrival
# patterns; results in docs/results/real/ (bench/real/run.py --help).
.PHONY: bench-real
bench-real: deps
	@$(MAKE) --no-print-directory build
	@/usr/bin/python3 bench/real/run.py --build $(BUILD) --reps $(or $(REPS),1)

# make bench-cluster [JOBS=N NODES=N CORES=C PLACEMENT=P]: the core at
# cluster scale in the simulator, 50,000 jobs on 1,000 nodes x 64 cores by
# default; prints wall time and epoch median/p99 (docs/cluster.md, "Scale").
.PHONY: bench-cluster
bench-cluster: build
	@bench/cluster.sh $(BUILD) $(or $(JOBS),50000) $(or $(NODES),1000) \
	  $(or $(CORES),64) $(or $(PLACEMENT),least-loaded)
