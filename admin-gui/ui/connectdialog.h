#pragma once
// Asks where and as whom to connect: host, port, CA, admin certificate and key, with file
// pickers and the recent connections. It stays open while the main window tries the
// connection and shows why it failed (missing file, refusal, wrong CA, broker unreachable).

#include <QComboBox>
#include <QDialog>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
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
    // Checks the files, then asks for the connection (connectRequested) and waits.
    void accept() override;
    void setBusy(const QString &text);
    void showError(const QString &text);
    QString messageText() const { return m_error->text(); }

Q_SIGNALS:
    void connectRequested(const cmq::admingui::ConnectionOptions &options);

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
    QPushButton *m_connect;
};

} // namespace cmq::admingui
