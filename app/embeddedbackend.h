// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <QObject>
#include <QProcess>

namespace fleetscope {

// The simulator backend the console starts for itself when no --backend is given: a fleetscope-backend child
// process on loopback, reached over gRPC like any other backend. If it dies it is started again on the same port,
// so the client simply reconnects.
class EmbeddedBackend : public QObject
{
    Q_OBJECT
public:
    EmbeddedBackend(int gpus, quint64 seed, const QStringList &extraArguments, QObject *parent = nullptr);
    ~EmbeddedBackend() override;

    void start();
    QString address() const { return m_address; }
    // The backend process's id while it runs, else 0.
    qint64 processId() const { return m_process.processId(); }

Q_SIGNALS:
    void ready(const QString &address);
    void failed(const QString &message);

private:
    void launch();
    void onOutput();
    void onFinished(int exitCode, QProcess::ExitStatus status);

    int m_gpus;
    quint64 m_seed;
    QStringList m_extraArguments;
    QProcess m_process;
    QByteArray m_buffer;
    QString m_address;
    int m_restarts = 0;
    bool m_stopping = false;
};

} // namespace fleetscope
