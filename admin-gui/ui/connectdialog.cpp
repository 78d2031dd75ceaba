#include "ui/connectdialog.h"

#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QPushButton>

#include "ui/bannerstyle.h"

namespace cmq::admingui {

ConnectDialog::ConnectDialog(const QList<ConnectionOptions> &recent, QWidget *parent)
    : QDialog(parent), m_recent(recent), m_recentBox(new QComboBox), m_host(new QLineEdit),
      m_port(new QSpinBox), m_error(new QLabel), m_connect(nullptr)
{
    setWindowTitle(tr("Connect to a CipherMQ broker"));
    setMinimumWidth(560);
    m_recentBox->addItem(tr("(new connection)"));
    for (const ConnectionOptions &options : recent)
        m_recentBox->addItem(options.label());
    connect(m_recentBox, &QComboBox::currentIndexChanged, this, [this](int index) {
        if (index > 0)
            setOptions(m_recent.value(index - 1));
    });
    m_port->setRange(1, 65535);
    m_port->setValue(9091);
    m_host->setText(QStringLiteral("localhost"));

    auto *form = new QFormLayout;
    form->addRow(tr("Recent:"), m_recentBox);
    form->addRow(tr("Host:"), m_host);
    form->addRow(tr("Admin port:"), m_port);
    m_ca = addFileRow(form, tr("CA certificate:"), tr("PEM certificates (*.crt *.pem);;All (*)"));
    m_cert =
        addFileRow(form, tr("Admin certificate:"), tr("PEM certificates (*.crt *.pem);;All (*)"));
    m_key = addFileRow(form, tr("Private key:"), tr("PEM keys (*.key *.pem);;All (*)"));

    m_error->setWordWrap(true);
    m_error->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_error->setVisible(false);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    m_connect = buttons->button(QDialogButtonBox::Ok);
    m_connect->setText(tr("Connect"));
    connect(buttons, &QDialogButtonBox::accepted, this, &ConnectDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &ConnectDialog::reject);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_error);
    layout->addWidget(buttons);
}

QLineEdit *ConnectDialog::addFileRow(QFormLayout *form, const QString &label, const QString &filter)
{
    auto *edit = new QLineEdit;
    auto *browse = new QPushButton(tr("Browse…"));
    connect(browse, &QPushButton::clicked, this, [this, edit, label, filter] {
        const QString path = QFileDialog::getOpenFileName(this, label, edit->text(), filter);
        if (!path.isEmpty())
            edit->setText(path);
    });
    auto *row = new QHBoxLayout;
    row->addWidget(edit, 1);
    row->addWidget(browse);
    form->addRow(label, row);
    return edit;
}

void ConnectDialog::setOptions(const ConnectionOptions &options)
{
    m_host->setText(options.host);
    m_port->setValue(options.port);
    m_ca->setText(options.caPath);
    m_cert->setText(options.certPath);
    m_key->setText(options.keyPath);
}

ConnectionOptions ConnectDialog::options() const
{
    ConnectionOptions options;
    options.host = m_host->text().trimmed();
    options.port = quint16(m_port->value());
    options.caPath = m_ca->text().trimmed();
    options.certPath = m_cert->text().trimmed();
    options.keyPath = m_key->text().trimmed();
    return options;
}

void ConnectDialog::accept()
{
    // Check the files here so a typo is fixed in the dialog, not discovered after a handshake.
    const auto tls = options().sslConfiguration();
    if (!tls) {
        showError(tls.error());
        return;
    }
    Q_EMIT connectRequested(options());
}

void ConnectDialog::setBusy(const QString &text)
{
    m_connect->setEnabled(false);
    m_error->setStyleSheet(QString());
    m_error->setText(text);
    m_error->setVisible(true);
}

void ConnectDialog::showError(const QString &text)
{
    m_connect->setEnabled(true);
    m_error->setStyleSheet(errorBannerStyle());
    m_error->setText(text);
    m_error->setVisible(true);
}

} // namespace cmq::admingui
