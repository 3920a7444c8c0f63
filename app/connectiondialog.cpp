// SPDX-License-Identifier: Apache-2.0
#include "app/connectiondialog.h"

#include "app/commandline.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace fleetscope {

ConnectionDialog::ConnectionDialog(const QString &backend, const ChannelSecurity &security, QWidget *parent)
    : QDialog(parent)
{
    setWindowTitle(tr("Connect to backend"));
    auto *form = new QFormLayout;
    m_backend = new QLineEdit(backend, this);
    m_backend->setPlaceholderText(tr("HOST:PORT, e.g. noc-backend.example:50051"));
    form->addRow(tr("&Backend:"), m_backend);
    QWidget *row = nullptr;
    m_ca = fileField(security.caFile, tr("The CA that signed the backend's certificate"), &row);
    m_ca->setPlaceholderText(tr("none: plain gRPC, or the system's CAs with a token or certificate"));
    form->addRow(tr("Backend's &CA:"), row);
    m_cert = fileField(security.certFile, tr("This console's certificate"), &row);
    m_cert->setPlaceholderText(tr("only for mutual TLS"));
    form->addRow(tr("Client c&ertificate:"), row);
    m_key = fileField(security.keyFile, tr("The client certificate's key"), &row);
    form->addRow(tr("Client &key:"), row);
    m_token = fileField(security.tokenFile, tr("A file holding the token"), &row);
    m_token->setPlaceholderText(tr("a file whose first line is the token"));
    form->addRow(tr("&Token file:"), row);

    m_remember = new QCheckBox(tr("&Remember on this machine (a wall then starts with no command line)"), this);
    m_remember->setChecked(true);
    m_problem = new QLabel(this);
    m_problem->setWordWrap(true);
    m_problem->setStyleSheet(QStringLiteral("color: #d9534f"));
    m_problem->hide();
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("C&onnect"));
    connect(buttons, &QDialogButtonBox::accepted, this, &ConnectionDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &ConnectionDialog::reject);

    auto *layout = new QVBoxLayout(this);
    auto *note = new QLabel(tr("Only where the secrets are is kept: the files are read at each connection, so a "
                               "rotated token or certificate is used without reconnecting by hand."),
        this);
    note->setWordWrap(true);
    layout->addWidget(note);
    layout->addLayout(form);
    layout->addWidget(m_remember);
    layout->addWidget(m_problem);
    layout->addWidget(buttons);
    resize(640, sizeHint().height());
}

QLineEdit *ConnectionDialog::fileField(const QString &path, const QString &title, QWidget **row)
{
    *row = new QWidget(this);
    auto *layout = new QHBoxLayout(*row);
    layout->setContentsMargins(0, 0, 0, 0);
    auto *field = new QLineEdit(path, *row);
    auto *browse = new QPushButton(tr("Browse…"), *row);
    connect(browse, &QPushButton::clicked, this, [this, field, title] {
        const QString chosen = QFileDialog::getOpenFileName(this, title, field->text());
        if (!chosen.isEmpty()) {
            field->setText(chosen);
        }
    });
    layout->addWidget(field, 1);
    layout->addWidget(browse);
    return field;
}

QString ConnectionDialog::backend() const
{
    return m_backend->text().trimmed();
}

ChannelSecurity ConnectionDialog::security() const
{
    ChannelSecurity security;
    security.caFile = m_ca->text().trimmed();
    security.certFile = m_cert->text().trimmed();
    security.keyFile = m_key->text().trimmed();
    security.tokenFile = m_token->text().trimmed();
    return security;
}

bool ConnectionDialog::remember() const
{
    return m_remember->isChecked();
}

void ConnectionDialog::accept()
{
    const QString why = checkConnection(backend(), security());
    if (!why.isEmpty()) {
        m_problem->setText(why);
        m_problem->show();
        return;
    }
    QDialog::accept();
}

} // namespace fleetscope
