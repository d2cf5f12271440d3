// Independent benchmark cases (simulations) spread over worker processes: the simulator keeps
// one SystemC context per process, so cases run in parallel as processes, not threads.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <vector>

namespace ltc::report {

// f(i) for every case i in [0, n), case i on worker i % jobs (jobs <= 1: here, in order); the
// results in case order. Each worker writes its results to a temporary file the parent reads
// back. Throws InputError for jobs < 1 and std::runtime_error with a worker's message when one
// fails. `done(i, result)` is called in the parent as results arrive (in order when jobs <= 1,
// else after all workers ended).
std::vector<nlohmann::json> run_cases(
    size_t n, int jobs, const std::function<nlohmann::json(size_t)>& f,
    const std::function<void(size_t, const nlohmann::json&)>& done = {});

}  // namespace ltc::report
