#pragma once
// The message styles shared by the window's banner and the connect dialog, so an error
// looks the same wherever it appears; light or dark to match the application palette.

#include <QString>

#include "models/palettecolors.h"

namespace cmq::admingui {

inline QString errorBannerStyle(bool dark = isDarkPalette())
{
    if (dark)
        return QStringLiteral(
            "background:#4a1c1c;color:#ffd6d6;padding:6px;border:1px solid #8a3a3a");
    return QStringLiteral("background:#fde2e2;color:#8a1c1c;padding:6px;border:1px solid #e0a0a0");
}

inline QString warningBannerStyle(bool dark = isDarkPalette())
{
    if (dark)
        return QStringLiteral(
            "background:#4a3a10;color:#fff0c8;padding:6px;border:1px solid #8a7030");
    return QStringLiteral("background:#fff4d6;color:#6b4e00;padding:6px;border:1px solid #e0c070");
}

inline QString okBannerStyle(bool dark = isDarkPalette())
{
    if (dark)
        return QStringLiteral(
            "background:#1c3a1c;color:#d6f5d6;padding:6px;border:1px solid #3a7a3a");
    return QStringLiteral("background:#e3f4e3;color:#1d5e1d;padding:6px;border:1px solid #a0d0a0");
}

} // namespace cmq::admingui
