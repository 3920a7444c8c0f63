// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "http/boundedhttpserver.h"

#include <charconv>
#include <functional>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

// The checks the backend's command line puts on option values, each saying what is wrong in words CLI11 puts after
// the option's name, and the options added with them.
namespace fleetscope::backend::cli {

// The whole of text as a number (from_chars: no octal, no sign for unsigned types, no leading space).
template <typename T> bool parseNumber(const std::string &text, T *out)
{
    const char *end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, *out);
    return ec == std::errc() && ptr == end;
}

// A CLI11 check from a function that says what is wrong with a value, or returns nothing; CLI11 puts the option's
// name before it ("--gpus: ..."). The empty description keeps the check out of the help's column of names.
CLI::Validator checkWith(std::function<std::string(const std::string &)> why);

// The number as from_chars reads it (CLI11 would read "010" as octal), from min to max; NaN is none.
template <typename T> CLI::Validator numberFrom(T min, T max)
{
    return checkWith([min, max](const std::string &text) {
        T value {};
        if (parseNumber(text, &value) && value >= min && value <= max) {
            return std::string();
        }
        return fmt::format("'{}' is not a number from {} to {}", text, min, max);
    });
}

// An option whose value, a number from min to max, is given to set.
template <typename T>
CLI::Option *addNumber(CLI::App &app, const std::string &name, T min, T max, std::function<void(T)> set,
    const std::string &description, const char *label)
{
    auto convert = [set = std::move(set)](const std::string &text) {
        T value {};
        parseNumber(text, &value); // checked by numberFrom
        set(value);
    };
    return app.add_option_function<std::string>(name, convert, description)
        ->type_name(label)
        ->check(numberFrom(min, max));
}

// A listen address, HOST:PORT (core/listenaddress.h).
CLI::Validator listenAddress();
// A secret file, read now so that a wrong path is found at start (and again for every request).
CLI::Validator secretFile(const char *what);
// A readable file holding a PEM certificate.
CLI::Validator pemFile();
// A readable file; `what` names it in the error.
CLI::Validator readableFile(const char *what);
// An HTTP door's TLS and credentials, --PREFIX-tls-cert, -tls-key, -client-ca, -token-file, as the gRPC door's are.
void addDoorOptions(CLI::App &app, const std::string &prefix, const char *door, BoundedHttpServer::Security *security);

} // namespace fleetscope::backend::cli
