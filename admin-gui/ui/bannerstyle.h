#pragma once
// The two message styles shared by the window's banner and the connect dialog, so an error
// looks the same wherever it appears.

#include <QString>

namespace cmq::admingui {

inline QString errorBannerStyle()
{
    return QStringLiteral("background:#fde2e2;color:#8a1c1c;padding:6px;border:1px solid #e0a0a0");
}

inline QString okBannerStyle()
{
    return QStringLiteral("background:#e3f4e3;color:#1d5e1d;padding:6px;border:1px solid #a0d0a0");
}

} // namespace cmq::admingui
