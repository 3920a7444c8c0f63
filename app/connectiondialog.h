// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "client/channelsecurity.h"

#include <QDialog>

class QCheckBox;
class QLabel;
class QLineEdit;

namespace fleetscope {

// File > Connect to backend: the backend's HOST:PORT and the files that prove the console to it (a CA for its
// certificate, a client certificate and key, a token file), each with a file chooser; the secrets themselves are never
// shown or stored, only where they are. Checked before it closes; "remember" saves them as this machine's default
// (the settings' [connection] group), so that a wall starts with no command line.
class ConnectionDialog : public QDialog
{
    Q_OBJECT
public:
    ConnectionDialog(const QString &backend, const ChannelSecurity &security, QWidget *parent = nullptr);

    QString backend() const;
    ChannelSecurity security() const;
    bool remember() const;

    void accept() override;

private:
    QLineEdit *fileField(const QString &path, const QString &title, QWidget **row);

    QLineEdit *m_backend = nullptr;
    QLineEdit *m_ca = nullptr;
    QLineEdit *m_cert = nullptr;
    QLineEdit *m_key = nullptr;
    QLineEdit *m_token = nullptr;
    QCheckBox *m_remember = nullptr;
    QLabel *m_problem = nullptr;
};

} // namespace fleetscope
