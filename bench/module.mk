# Benchmarks live in the slaq command (`slaq bench ...`) and in bench/*.sh.

# make bench-real [REPS=N]: real PyTorch, scikit-learn and slaq-train jobs
# run plainly, under slaqd fair and under slaqd slaq, in two arrival
# patterns; results in docs/results/real/ (bench/real/run.py --help).
.PHONY: bench-real
bench-real: deps
	@$(MAKE) --no-print-directory build
	@/usr/bin/python3 bench/real/run.py --build $(BUILD) --reps $(or $(REPS),1)

# make bench-users [REPS=N]: the user-style corpus (eight jobs written as
# users write them: library defaults, threads from cores(), a DataLoader,
# a slow start, a warm-up...) in every pattern, every way of running;
# results in docs/results/real/users/ (docs/bench-real.md).
.PHONY: bench-users
bench-users: deps
	@$(MAKE) --no-print-directory build
	@/usr/bin/python3 bench/real/run.py --build $(BUILD) --corpus users \
	  --reps $(or $(REPS),1) --modes plain,plain1,queue,fair,slaq \
	  --patterns stream,together,staggered \
	  --out docs/results/real/users

# make bench-cluster [JOBS=N NODES=N CORES=C PLACEMENT=P]: the core at
# cluster scale in the simulator, 50,000 jobs on 1,000 nodes x 64 cores by
# default; prints wall time and epoch median/p99 (docs/cluster.md, "Scale").
.PHONY: bench-cluster
bench-cluster: build
	@bench/cluster.sh $(BUILD) $(or $(JOBS),50000) $(or $(NODES),1000) \
	  $(or $(CORES),64) $(or $(PLACEMENT),least-loaded)
