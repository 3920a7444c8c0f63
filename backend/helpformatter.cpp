// SPDX-License-Identifier: Apache-2.0
#include "helpformatter.h"

#include <sstream>

namespace fleetscope::backend::cli {

std::string HelpFormatter::make_help(const CLI::App *app, std::string name, CLI::AppFormatMode mode) const
{
    std::string text = CLI::Formatter::make_help(app, std::move(name), mode);
    for (size_t at = text.find("\n\n\n"); at != std::string::npos; at = text.find("\n\n\n", at)) {
        text.erase(at, 1);
    }
    return text;
}

std::string HelpFormatter::make_footer(const CLI::App *app) const
{
    return wrap(app->get_footer(), width) + "\n";
}

std::string HelpFormatter::make_option_opts(const CLI::Option *option) const
{
    const std::string value = option->get_type_name();
    return option->get_type_size() == 0 || value.empty() ? std::string() : " " + value;
}

std::string HelpFormatter::make_option_desc(const CLI::Option *option) const
{
    std::string text = option->get_description();
    for (const CLI::Option *needed : option->get_needs()) {
        text += "; needs " + needed->get_name();
    }
    for (const CLI::Option *excluded : option->get_excludes()) {
        text += "; not with " + excluded->get_name();
    }
    return wrap(text, width - column_width_);
}

std::string HelpFormatter::wrap(const std::string &text, size_t lineWidth)
{
    std::string wrapped;
    size_t lineLength = 0;
    std::istringstream words(text);
    for (std::string word; words >> word;) {
        if (lineLength > 0 && lineLength + 1 + word.size() > lineWidth) {
            wrapped += '\n';
            lineLength = 0;
        } else if (lineLength > 0) {
            wrapped += ' ';
            ++lineLength;
        }
        wrapped += word;
        lineLength += word.size();
    }
    return wrapped;
}

} // namespace fleetscope::backend::cli
