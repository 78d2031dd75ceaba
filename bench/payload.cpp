#include "payload.h"

#include <QRandomGenerator>

namespace cmq::bench {

QByteArray randomCiphertextField(int bytes)
{
    // fillRange writes whole 32-bit words: round the buffer up, then keep `bytes` of it.
    QByteArray random((bytes + 3) / 4 * 4, Qt::Uninitialized);
    QRandomGenerator::global()->fillRange(reinterpret_cast<quint32 *>(random.data()),
                                          random.size() / 4);
    return random.left(bytes).toBase64();
}

} // namespace cmq::bench
