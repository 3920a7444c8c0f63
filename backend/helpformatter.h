// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace fleetscope::backend::cli {

// CLI11's help in groups, with one blank line between them; an option's name and value beside its description, which
// is wrapped to the help's width and says which options it needs or excludes.
class HelpFormatter : public CLI::Formatter
{
public:
    static constexpr size_t width = 110;

    HelpFormatter() { column_width(36); }

    std::string make_help(const CLI::App *app, std::string name, CLI::AppFormatMode mode) const override;
    std::string make_footer(const CLI::App *app) const override;
    std::string make_option_opts(const CLI::Option *option) const override;
    std::string make_option_desc(const CLI::Option *option) const override;

private:
    static std::string wrap(const std::string &text, size_t lineWidth);
};

} // namespace fleetscope::backend::cli
