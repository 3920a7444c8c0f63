// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <fleetscope/telemetry/v1/telemetry.pb.h>

#include <cstdint>
#include <vector>

// The GPUs a ListJobs job names, from its list or from its runs (the backend sends whichever is smaller).
inline std::vector<uint32_t> jobGpus(const fleetscope::telemetry::v1::Job &job)
{
    std::vector<uint32_t> gpus(job.gpus().begin(), job.gpus().end());
    for (const auto &run : job.gpu_runs()) {
        for (uint32_t i = 0; i < run.count(); ++i) {
            gpus.push_back(run.first() + i);
        }
    }
    return gpus;
}
