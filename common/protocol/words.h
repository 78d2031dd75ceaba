#pragma once
// Splitting request lines into words, for both line protocols. Each protocol keeps its own
// rule of what separates words, named here side by side, because clients depend on both:
//   - the data protocol (docs/PROTOCOL.md): spaces only, after the line lost its ASCII
//     whitespace at both ends (as the original broker trims requests). A tab is part of a word,
//     so a name with one is refused as a control character;
//   - the admin protocol (docs/ADMIN-PROTOCOL.md): spaces and tabs.
// Runs of separators count as one.

#include <iterator>

#include <QByteArrayView>
#include <QList>

namespace cmq::protocol::words {

using Rule = bool (*)(char);

constexpr bool isSpace(char c)
{
    return c == ' ';
}

constexpr bool isBlank(char c)
{
    return c == ' ' || c == '\t';
}

// `text` without the separators it starts with.
template <Rule separates> QByteArrayView skip(QByteArrayView text)
{
    qsizetype i = 0;
    while (i < text.size() && separates(text[i]))
        ++i;
    return text.sliced(i);
}

// `text` without separators at either end.
template <Rule separates> QByteArrayView trimmed(QByteArrayView text)
{
    text = skip<separates>(text);
    qsizetype end = text.size();
    while (end > 0 && separates(text[end - 1]))
        --end;
    return text.first(end);
}

// The next word; `rest` moves past it and the one separator after it.
template <Rule separates> QByteArrayView take(QByteArrayView &rest)
{
    rest = skip<separates>(rest);
    qsizetype end = 0;
    while (end < rest.size() && !separates(rest[end]))
        ++end;
    const QByteArrayView word = rest.first(end);
    rest = end < rest.size() ? rest.sliced(end + 1) : QByteArrayView();
    return word;
}

// Every word of `text`.
template <Rule separates> QList<QByteArrayView> split(QByteArrayView text)
{
    QList<QByteArrayView> out;
    for (QByteArrayView word = take<separates>(text); !word.isEmpty(); word = take<separates>(text))
        out.append(word);
    return out;
}

// One row of a protocol's table of command words; the table is ordered like the enum, so a
// command's name is table[int(command)].name.
template <typename Command> struct CommandWord
{
    QByteArrayView name;
    Command command;
};

// The command `word` names, or `unknown`.
template <typename Command, std::size_t N>
constexpr Command lookup(const CommandWord<Command> (&table)[N], QByteArrayView word,
                         Command unknown)
{
    for (const CommandWord<Command> &entry : table) {
        if (entry.name == word)
            return entry.command;
    }
    return unknown;
}

} // namespace cmq::protocol::words
