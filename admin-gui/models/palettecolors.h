#pragma once
// Highlight colours derived from the application palette, so warnings stay readable under a
// dark system palette as well as a light one (text keeps the palette's own colour). Models
// also run without a QGuiApplication (unit tests, headless export): then the light set.

#include <QColor>
#include <QGuiApplication>
#include <QPalette>

namespace cmq::admingui {

inline bool isDarkPalette(const QPalette &palette)
{
    return palette.color(QPalette::Window).lightness() < 128;
}

inline bool isDarkPalette()
{
    // qGuiApp is a static_cast: it is not null under a plain QCoreApplication.
    return qobject_cast<QGuiApplication *>(QCoreApplication::instance()) != nullptr &&
           isDarkPalette(QGuiApplication::palette());
}

// Behind a row or cell that needs attention; `strong` for the cell that is the reason.
inline QColor warningBackground(bool strong = false, bool dark = isDarkPalette())
{
    if (dark)
        return strong ? QColor(0x8a, 0x2a, 0x2a) : QColor(0x5a, 0x22, 0x22);
    return strong ? QColor(0xf8, 0x9a, 0x9a) : QColor(0xfd, 0xe2, 0xe2);
}

// Text that reports a failure, on the palette's ordinary background.
inline QColor errorText(bool dark = isDarkPalette())
{
    return dark ? QColor(0xff, 0x8a, 0x80) : QColor(0x8a, 0x1c, 0x1c);
}

} // namespace cmq::admingui
