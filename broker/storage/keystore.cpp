#include "keystore.h"

#include <QSqlQuery>

#include "aesgcm.h"

namespace cmq::storage {

Status savePublicKey(SqlSession &session, const QByteArray &aesKey, const QString &clientId,
                     const QByteArray &publicKey)
{
    // The client id is the associated data: a row copied under another client's name fails.
    const Result<SealedBox> box = aesgcm::seal(aesKey, publicKey, clientId.toUtf8());
    if (!box)
        return failure(
            QStringLiteral("cannot encrypt public key for %1: %2").arg(clientId, box.error()));
    const SqlSession &s = session;
    return session.exec(
        QStringLiteral("INSERT INTO public_keys (client_id, ciphertext, nonce, tag, updated_at) "
                       "VALUES (") +
        s.text(clientId) + u',' + s.text(QString::fromLatin1(box->ciphertext.toBase64())) + u',' +
        s.text(QString::fromLatin1(box->nonce.toBase64())) + u',' +
        s.text(QString::fromLatin1(box->tag.toBase64())) + u',' +
        s.time(QDateTime::currentDateTimeUtc()) +
        QStringLiteral(") ON CONFLICT (client_id) DO UPDATE SET ciphertext = excluded.ciphertext, "
                       "nonce = excluded.nonce, tag = excluded.tag, "
                       "updated_at = excluded.updated_at"));
}

Result<std::optional<QByteArray>> loadPublicKey(SqlSession &session, const QByteArray &aesKey,
                                                const QString &clientId)
{
    using R = Result<std::optional<QByteArray>>;
    QSqlQuery query = session.newQuery();
    Status st = session.run(query, QStringLiteral("SELECT ciphertext, nonce, tag FROM public_keys "
                                                  "WHERE client_id = ") +
                                       session.text(clientId));
    if (!st)
        return R::failure(st.error());
    if (!query.next()) {
        if (st = session.finish(query); !st)
            return R::failure(st.error());
        return std::optional<QByteArray>();
    }

    auto decode = [](const QVariant &value, QByteArray *out) {
        auto decoded = QByteArray::fromBase64Encoding(value.toString().toLatin1(),
                                                      QByteArray::AbortOnBase64DecodingErrors);
        *out = decoded.decoded;
        return decoded.decodingStatus == QByteArray::Base64DecodingStatus::Ok;
    };
    SealedBox box;
    const bool decoded = decode(query.value(0), &box.ciphertext) &&
                         decode(query.value(1), &box.nonce) && decode(query.value(2), &box.tag);
    if (st = session.finish(query); !st)
        return R::failure(st.error());

    const Result<QByteArray> plain =
        decoded ? aesgcm::open(aesKey, box, clientId.toUtf8())
                : Result<QByteArray>::failure(QStringLiteral("malformed base64"));
    if (!plain) {
        return R::failure(QStringLiteral("cannot decrypt public key for %1: wrong "
                                         "encryption.aes_key or corrupted row")
                              .arg(clientId));
    }
    return std::optional<QByteArray>(plain.value());
}

} // namespace cmq::storage
