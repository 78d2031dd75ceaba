#pragma once
// Asks where and as whom to connect: host, port, CA, admin certificate and key, with file
// pickers, the recent connections and a readable reason when something is missing.

#include <QComboBox>
#include <QDialog>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>

#include "models/connectionoptions.h"

namespace cmq::admingui {

class ConnectDialog final : public QDialog
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ConnectDialog)

public:
    explicit ConnectDialog(const QList<ConnectionOptions> &recent, QWidget *parent = nullptr);

    void setOptions(const ConnectionOptions &options);
    ConnectionOptions options() const;
    void accept() override;

private:
    QLineEdit *addFileRow(QFormLayout *form, const QString &label, const QString &filter);

    QList<ConnectionOptions> m_recent;
    QComboBox *m_recentBox;
    QLineEdit *m_host;
    QSpinBox *m_port;
    QLineEdit *m_ca = nullptr;
    QLineEdit *m_cert = nullptr;
    QLineEdit *m_key = nullptr;
    QLabel *m_error;
};

} // namespace cmq::admingui
