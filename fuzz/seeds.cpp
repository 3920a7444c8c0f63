// SPDX-License-Identifier: Apache-2.0
// Writes the seed corpora, fuzz/corpus/<target>/, from the real encoders (topology and frame parts and QueryRange
// parts' headers as the backend sends them, remote-write bodies as a sender builds them, view strings as the console
// formats them) and a few answers, requests and files by hand. Run once, by hand:
//   build/fuzz/bin/fuzz_seeds .     (from the source tree; the files are checked in)
#include "fuzz/seeds.h"

#include <cstdio>
#include <fstream>
#include <sstream>

namespace fleetscope::fuzz::seeds {

namespace {
std::filesystem::path g_root;
} // namespace

const std::filesystem::path &sourceDir()
{
    return g_root;
}

void write(const std::string &target, const std::string &name, const std::string &bytes)
{
    const std::filesystem::path dir = g_root / "fuzz" / "corpus" / target;
    std::filesystem::create_directories(dir);
    std::ofstream(dir / name, std::ios::binary) << bytes;
}

std::string readText(const std::filesystem::path &path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

} // namespace fleetscope::fuzz::seeds

int main(int argc, char **argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: fuzz_seeds SOURCE_DIR\n");
        return 2;
    }
    fleetscope::fuzz::seeds::g_root = argv[1];
    fleetscope::fuzz::seeds::backendSeeds();
    fleetscope::fuzz::seeds::wireSeeds();
    fleetscope::fuzz::seeds::textSeeds();
    return 0;
}
