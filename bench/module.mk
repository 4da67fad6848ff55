# Benchmarks live in the slaq command (`slaq bench ...`) and in bench/*.sh.

# make bench-real [REPS=N]: real PyTorch, scikit-learn and slaq-train jobs
# run plainly, under slaqd fair and under slaqd slaq, in two arrival
# patterns; results in docs/results/real/ (bench/real/run.py --help).
.PHONY: bench-real
bench-real: deps
	@$(MAKE) --no-print-directory build
	@/usr/bin/python3 bench/real/run.py --build $(BUILD) --reps $(or $(REPS),1)
