// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace fleetscope::backend {

// A file the access gate reads who may call from (the token file, the client roles file), read again when it changes.
//
// Rotation without a restart: the file is looked at (one stat()) at most once a second, by the first call after the
// second is up, and read again when its modification or change time, size, inode or mode differ from the last read
// (or when that read came too soon after a change to trust the stamp: Stamp::fresh). A stat() per call made every call
// of a token-guessing flood a system call on a path; once a second bounds that whatever the call rate, needs no thread
// of its own, and sees every way a file is replaced: written in place, renamed over, chmod'ed, or swapped under a
// symbolic link as Kubernetes does with a mounted secret (its ..data link), which an inotify watch on the file misses
// unless it watches the directory too. The price is that a change takes effect up to a second after it is written.
//
// Fail closed: a file that becomes empty, missing or unreadable, or holds a line its parser refuses, holds nothing
// (current() is null, and the gate refuses every call) until it is put right: a file emptied by mistake must not leave
// the old credentials working, nor, worse, read as "no credential needed". It is said once each time what is wrong
// changes, and the file is read again every second while it is wrong, so that it is taken back as soon as it is put
// right.
//
// A secret file (tokens) that its group or others may read is a warning (at start, and again when the file changes),
// not a refusal: a packager may have reasons (a group of operators), but usually it is a mistake that lets every
// account on the host read the fleet.
class CredentialFile
{
public:
    using Log = std::function<void(const std::string &)>;
    using Clock = std::function<std::chrono::steady_clock::time_point()>;
    // What a file's text holds once parsed (the owner's type, see TokenFile and ClientRoles); null when the text is
    // wrong, with an error that names the file and the line.
    using Content = std::shared_ptr<const void>;
    using Parse = std::function<Content(std::string_view text, std::string *error)>;
    // What a good file holds, for the line that says it is taken back: "3 token(s)".
    using Describe = std::function<std::string(const void *content)>;

    // How often the file is looked at for a change.
    static constexpr std::chrono::seconds lookEvery { 1 };
    // The largest file read: credentials are lines of tens of bytes, not a document.
    static constexpr size_t maxBytes = 1 << 20;

    struct Kind
    {
        std::string what; // "token file", for messages
        bool secret = false; // warn when others may read it
        Parse parse;
        Describe describe;
    };

    // log: where the warnings and the changes of state go (stderr by default); clock: steady_clock by default.
    CredentialFile(std::string path, Kind kind, Log log = {}, Clock clock = {});

    // Reads the file; false with an error when it cannot be read or parsed (a start-up check). Warns when it is secret
    // and its group or others may read it.
    bool load(std::string *error);
    // The content as last read, after a look for a change when one is due; null while the file is wrong.
    Content current();
    // What is wrong with the file as last read, empty while it is good.
    std::string problem();
    const std::string &path() const { return m_path; }

    // What stat() says of the file, to tell whether it changed since it was read.
    struct Stamp
    {
        int64_t mtimeNs = -1;
        int64_t ctimeNs = -1;
        int64_t size = -1;
        uint64_t inode = 0;
        uint32_t mode = 0;
        bool operator==(const Stamp &other) const
        {
            return mtimeNs == other.mtimeNs && ctimeNs == other.ctimeNs && size == other.size && inode == other.inode
                && mode == other.mode;
        }
        // Changed within a second before now (the wall clock): the file system's times have a granularity of a
        // clock tick (about 4 ms), so a file written again in place, at the same size, within the tick of a read would
        // keep the stamp read with it. Such a stamp is not trusted: the file is read again at the next look (as git
        // does with its "racily clean" entries).
        bool fresh() const;
    };

private:
    // Reads and parses the file; null with an error. Its stamp as read in *stamp (that of a failed stat: Stamp()).
    Content read(Stamp *stamp, std::string *error) const;
    void warnIfOthersMayRead(const Stamp &stamp) const;
    void lookForChange();

    std::string m_path;
    Kind m_kind;
    Log m_log;
    Clock m_clock;
    std::mutex m_mutex; // guards everything below
    Content m_content; // null while the file is wrong: nothing is accepted
    std::string m_problem; // what is wrong with the file, said once each time it changes; empty while good
    Stamp m_stamp;
    bool m_stampFresh = false; // when read: see Stamp::fresh
    std::chrono::steady_clock::time_point m_lastLook {};
};

} // namespace fleetscope::backend
