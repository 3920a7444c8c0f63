// SPDX-License-Identifier: Apache-2.0
#include "service/credentialfile.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <sys/stat.h>
#include <time.h>

#include <fmt/format.h>

namespace fleetscope::backend {

namespace {
int64_t nanoseconds(const struct timespec &t)
{
    return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

CredentialFile::Stamp stampOf(const struct stat &info)
{
    return { nanoseconds(info.st_mtim), nanoseconds(info.st_ctim), static_cast<int64_t>(info.st_size),
        static_cast<uint64_t>(info.st_ino), static_cast<uint32_t>(info.st_mode) };
}

void toStderr(const std::string &line)
{
    fmt::print(stderr, "fleetscope-backend: {}\n", line);
}

std::chrono::steady_clock::time_point steadyNow()
{
    return std::chrono::steady_clock::now();
}
} // namespace

CredentialFile::CredentialFile(std::string path, Kind kind, Log log, Clock clock)
    : m_path(std::move(path))
    , m_kind(std::move(kind))
    , m_log(log ? std::move(log) : Log(toStderr))
    , m_clock(clock ? std::move(clock) : Clock(steadyNow))
{ }

bool CredentialFile::Stamp::fresh() const
{
    struct timespec now
    {
    };
    clock_gettime(CLOCK_REALTIME, &now);
    return nanoseconds(now) - std::max(mtimeNs, ctimeNs) < 1'000'000'000;
}

CredentialFile::Content CredentialFile::read(Stamp *stamp, std::string *error) const
{
    struct stat info
    {
    };
    *stamp = Stamp();
    if (::stat(m_path.c_str(), &info) != 0) {
        *error = fmt::format("cannot read the {} '{}'", m_kind.what, m_path);
        return nullptr;
    }
    *stamp = stampOf(info);
    if (!S_ISREG(info.st_mode) || info.st_size > static_cast<off_t>(maxBytes)) {
        *error = fmt::format("the {} '{}' is not a file of at most 1 MiB", m_kind.what, m_path);
        return nullptr;
    }
    std::ifstream in(m_path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) {
        *error = fmt::format("cannot read the {} '{}'", m_kind.what, m_path);
        return nullptr;
    }
    // Grown past the bound between the stat() and the read: refused as if the stat() had seen it.
    if (text.tellp() > static_cast<std::streamoff>(maxBytes)) {
        *error = fmt::format("the {} '{}' is not a file of at most 1 MiB", m_kind.what, m_path);
        return nullptr;
    }
    return m_kind.parse(text.str(), error);
}

void CredentialFile::warnIfOthersMayRead(const Stamp &stamp) const
{
    // Looked at from the mode, not from who we are: the question is who else on the host can read it.
    if (m_kind.secret && (stamp.mode & (S_IRGRP | S_IROTH)) != 0) {
        m_log(fmt::format("warning: the {} '{}' may be read by {} (mode {:04o}): whoever can read it can read "
                          "the fleet; chmod 600 it (in Kubernetes, the secret volume's defaultMode 0400)",
            m_kind.what, m_path, (stamp.mode & S_IROTH) != 0 ? "every account on this host" : "its group",
            stamp.mode & 07777));
    }
}

bool CredentialFile::load(std::string *error)
{
    Stamp stamp;
    Content content = read(&stamp, error);
    if (content) {
        warnIfOthersMayRead(stamp);
    }
    std::lock_guard lock(m_mutex);
    m_lastLook = m_clock();
    m_stamp = stamp;
    m_stampFresh = stamp.fresh();
    if (!content) {
        m_content.reset();
        m_problem = *error;
        return false;
    }
    m_content = std::move(content);
    m_problem.clear();
    return true;
}

void CredentialFile::lookForChange()
{
    Stamp seen;
    {
        std::lock_guard lock(m_mutex);
        const auto now = m_clock();
        if (now - m_lastLook < lookEvery) {
            return;
        }
        m_lastLook = now; // the one caller this second that looks; the others go on with what is held
    }
    struct stat info
    {
    };
    if (::stat(m_path.c_str(), &info) == 0) {
        seen = stampOf(info);
    }
    {
        std::lock_guard lock(m_mutex);
        // Read again also while the file is wrong (it may be put right within the stamp's granularity), and when the
        // stamp read last was too fresh to trust.
        if (seen == m_stamp && m_problem.empty() && !m_stampFresh) {
            return;
        }
    }
    Stamp stamp;
    std::string error;
    Content content = read(&stamp, &error);
    std::lock_guard lock(m_mutex);
    const bool changed = !(stamp == m_stamp);
    m_stamp = stamp;
    m_stampFresh = stamp.fresh();
    if (!content) {
        m_content.reset();
        if (error != m_problem) {
            m_log(fmt::format("{}: every call is refused until it is put right", error));
        }
        m_problem = std::move(error);
        return;
    }
    if (changed || !m_problem.empty()) {
        warnIfOthersMayRead(stamp);
    }
    if (!m_problem.empty()) {
        m_log(fmt::format("the {} '{}' holds {} again: calls are admitted again", m_kind.what, m_path,
            m_kind.describe ? m_kind.describe(content.get()) : std::string("what it should")));
    }
    m_problem.clear();
    m_content = std::move(content);
}

CredentialFile::Content CredentialFile::current()
{
    lookForChange();
    std::lock_guard lock(m_mutex);
    return m_content;
}

std::string CredentialFile::problem()
{
    std::lock_guard lock(m_mutex);
    return m_problem;
}

} // namespace fleetscope::backend
