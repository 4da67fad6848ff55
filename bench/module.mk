# Benchmarks live in the slaq command (`slaq bench ...`) and in bench/*.sh.
