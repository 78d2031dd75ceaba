#pragma once
// The stand-in ciphertext a benchmark envelope carries.

#include <QByteArray>

namespace cmq::bench {

// Random bytes, base64-encoded as an envelope's ciphertext field is. `bytes` counts the bytes
// before base64, so a run carries the same payload as another broker's bodies of that size.
QByteArray randomCiphertextField(int bytes);

} // namespace cmq::bench
