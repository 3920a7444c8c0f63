// SPDX-License-Identifier: Apache-2.0
#pragma once

// Internal to client/: text the backend sends for people to read (names, versions, messages). The backend is not
// trusted to keep it short or printable: a megabyte of hostname would be laid out by every label and search that shows
// it, and a line break or an escape sequence would break a table row, a CSV line or a log line.

#include <QChar>
#include <QString>

#include <algorithm>
#include <cstddef>
#include <string>

namespace fleetscope {

// Longest kept, in characters, by kind of text (a DNS name is at most 253).
constexpr int maxNameText = 64; // rows, halls, racks, models, versions, rollups
constexpr int maxHostnameText = 253; // nodes
constexpr int maxJobText = 128; // job names and owners
constexpr int maxMessageText = 512; // event texts
constexpr size_t maxSerialBytes = 32; // GPU board serials (printable ASCII, no spaces)

// raw as UTF-8 (invalid sequences replaced), control and format characters (line breaks, tabs, escapes, bidi
// overrides) as spaces, runs of spaces as one, at most limit characters (an ellipsis marks a cut). Past 4 bytes a
// character the cut is certain, so the rest of raw is not read.
inline QString wireText(const std::string &raw, int limit)
{
    const size_t read = std::min(raw.size(), static_cast<size_t>(4 * limit + 4));
    QString text = QString::fromUtf8(raw.data(), static_cast<qsizetype>(read));
    for (QChar &c : text) {
        if (c.category() == QChar::Other_Control || c.category() == QChar::Other_Format) {
            c = QLatin1Char(' ');
        }
    }
    text = text.simplified();
    if (text.size() > limit) {
        // Not between the two halves of a character outside the BMP (an emoji, say).
        const qsizetype keep = text.at(limit - 2).isHighSurrogate() ? limit - 2 : limit - 1;
        text = text.left(keep) + QChar(0x2026);
    }
    return text;
}

// A short quotation of wire text for an error message: at most 40 characters, in quotes.
inline QString quotedWireText(const std::string &raw)
{
    return QLatin1Char('\'') + wireText(raw, 40) + QLatin1Char('\'');
}

} // namespace fleetscope
