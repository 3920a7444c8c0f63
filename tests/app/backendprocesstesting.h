// SPDX-License-Identifier: Apache-2.0
// For the suites that run a real backend process (tst_wall, tst_incidentflow).
#pragma once

#include <QByteArray>
#include <QElapsedTimer>
#include <QProcess>
#include <QString>
#include <QStringList>

namespace fleetscope::backendprocesstesting {

// A fleetscope-backend process and the address it listens on, as it says on its standard output ("listening on
// 127.0.0.1:41234"). start() again after stop() starts another, on the address it is given. It is killed when it goes.
class BackendProcess
{
public:
    // arguments: fleetscope-backend's, --listen among them. False when it did not start or did not say where it
    // listens within a minute (or said nothing like it in its first MiB).
    bool start(const QStringList &arguments)
    {
        m_address.clear();
        m_process.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        m_process.start(QStringLiteral(FLEETSCOPE_BIN_DIR "/fleetscope-backend"), arguments);
        if (!m_process.waitForStarted(10000)) {
            return false;
        }
        constexpr qsizetype mostRead = 1 << 20;
        const QByteArray said = "listening on ";
        QByteArray out;
        QElapsedTimer clock;
        clock.start();
        while (clock.elapsed() < 60000 && out.size() < mostRead) {
            if (!m_process.waitForReadyRead(1000) && m_process.state() != QProcess::Running) {
                return false;
            }
            out += m_process.readAllStandardOutput();
            const qsizetype at = out.indexOf(said);
            const qsizetype end = at >= 0 ? out.indexOf('\n', at) : -1;
            if (end > at) {
                const qsizetype from = at + said.size();
                m_address = QString::fromUtf8(out.mid(from, end - from)).trimmed();
                return true;
            }
        }
        return false;
    }
    // As an outage would: killed, no goodbye to its clients.
    void stop()
    {
        m_process.kill();
        m_process.waitForFinished(5000);
    }
    ~BackendProcess() { stop(); }
    QString address() const { return m_address; }

private:
    QProcess m_process;
    QString m_address;
};

} // namespace fleetscope::backendprocesstesting
