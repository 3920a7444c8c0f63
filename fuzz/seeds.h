// SPDX-License-Identifier: Apache-2.0
#pragma once

// The seed corpora's writer (seeds.cpp) and its families, one file each: what senders, upstream servers and operators
// give the backend (backendseeds.cpp), what a backend sends the console (wireseeds.cpp), what a person writes for the
// console (textseeds.cpp).

#include <filesystem>
#include <string>

namespace fleetscope::fuzz::seeds {

// The source tree the corpora go under (fuzz_seeds' argument).
const std::filesystem::path &sourceDir();
// Writes one seed: fuzz/corpus/<target>/<name>.
void write(const std::string &target, const std::string &name, const std::string &bytes);
std::string readText(const std::filesystem::path &path);

// remotewrite, promjson, topologyfile, httphead, tokenfile, configfile
void backendSeeds();
// topology, frameparts, answers
void wireSeeds();
// viewstring, playlist
void textSeeds();

} // namespace fleetscope::fuzz::seeds
