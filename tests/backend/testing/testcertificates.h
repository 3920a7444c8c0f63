// SPDX-License-Identifier: Apache-2.0
// Certificates made at test time with the openssl tool (no private key is ever committed): two CAs, server and client
// certificates from them, an expired one and one for another host. P-256 keys, so that making them all takes well
// under a second.
#pragma once

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QString>
#include <QTemporaryDir>

namespace fleetscope::testing {

class TestCertificates
{
public:
    // Empty when the openssl tool is missing or a step failed (error() says which).
    bool make()
    {
        m_openssl = QStandardPaths::findExecutable(QStringLiteral("openssl"));
        if (m_openssl.isEmpty()) {
            m_error = QStringLiteral("the openssl tool is not installed (Debian package 'openssl')");
            return false;
        }
        return makeCa(QStringLiteral("ca")) && makeCa(QStringLiteral("otherca"))
            && issue(QStringLiteral("server"), QStringLiteral("ca"), serverNames, 2)
            && issue(QStringLiteral("expired"), QStringLiteral("ca"), serverNames, -1)
            && issue(QStringLiteral("elsewhere"), QStringLiteral("ca"), QStringLiteral("DNS:elsewhere.example"), 2)
            && issue(QStringLiteral("client"), QStringLiteral("ca"), QString(), 2)
            && issue(QStringLiteral("strangerclient"), QStringLiteral("otherca"), QString(), 2)
            && issue(QStringLiteral("nocwall"), QStringLiteral("ca"), QString(), 2, nocWallSubject);
    }
    QString error() const { return m_error; }

    // NAME.crt and NAME.key: ca, otherca, server (127.0.0.1 and localhost), expired, elsewhere (another host's),
    // client (from ca), strangerclient (from otherca), nocwall (from ca, a client's with the subject below).
    QString crt(const QString &name) const { return m_dir.filePath(name + QStringLiteral(".crt")); }
    QString key(const QString &name) const { return m_dir.filePath(name + QStringLiteral(".key")); }
    QString path(const QString &name) const { return m_dir.filePath(name); }

    // Writes text to a file in the directory: replaced whole by a rename, as a tool rotating a secret does.
    QString write(const QString &name, const QByteArray &text) const
    {
        const QString target = path(name);
        QFile file(target + QStringLiteral(".new"));
        if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate) || file.write(text) != text.size()) {
            return {};
        }
        file.close();
        QFile::remove(target);
        return QFile::rename(target + QStringLiteral(".new"), target) ? target : QString();
    }

    // nocwall's subject as openssl -subj takes it: several parts, one with a comma.
    static inline const QString nocWallSubject = QStringLiteral("/O=Example NOC/OU=Wall\\, Hall 2/CN=noc-wall");

private:
    static inline const QString serverNames = QStringLiteral("IP:127.0.0.1,DNS:localhost");

    bool run(const QStringList &arguments)
    {
        QProcess process;
        process.setProcessChannelMode(QProcess::MergedChannels);
        process.setWorkingDirectory(m_dir.path());
        process.start(m_openssl, arguments);
        if (!process.waitForFinished(30000) || process.exitStatus() != QProcess::NormalExit
            || process.exitCode() != 0) {
            m_error = QStringLiteral("openssl %1: %2")
                          .arg(arguments.join(QLatin1Char(' ')), QString::fromLocal8Bit(process.readAll()));
            return false;
        }
        return true;
    }

    bool makeCa(const QString &name)
    {
        return run({ QStringLiteral("req"), QStringLiteral("-x509"), QStringLiteral("-newkey"), QStringLiteral("ec"),
            QStringLiteral("-pkeyopt"), QStringLiteral("ec_paramgen_curve:P-256"), QStringLiteral("-nodes"),
            QStringLiteral("-keyout"), name + QStringLiteral(".key"), QStringLiteral("-out"),
            name + QStringLiteral(".crt"), QStringLiteral("-days"), QStringLiteral("2"), QStringLiteral("-subj"),
            QStringLiteral("/CN=Fleetscope test %1").arg(name) });
    }

    // A certificate for name from ca, valid for days (negative: expired), with these subject alternative names and
    // subject ("/CN=name" when none is given).
    bool issue(const QString &name, const QString &ca, const QString &altNames, int days, QString subject = {})
    {
        const QString extensions = name + QStringLiteral(".ext");
        QFile ext(m_dir.filePath(extensions));
        if (!ext.open(QIODevice::WriteOnly)) {
            m_error = QStringLiteral("cannot write %1").arg(ext.fileName());
            return false;
        }
        ext.write(altNames.isEmpty()
                ? QByteArray("extendedKeyUsage=clientAuth\n")
                : QStringLiteral("subjectAltName=%1\nextendedKeyUsage=serverAuth\n").arg(altNames).toLatin1());
        ext.close();
        return run({ QStringLiteral("req"), QStringLiteral("-newkey"), QStringLiteral("ec"), QStringLiteral("-pkeyopt"),
                   QStringLiteral("ec_paramgen_curve:P-256"), QStringLiteral("-nodes"), QStringLiteral("-keyout"),
                   name + QStringLiteral(".key"), QStringLiteral("-out"), name + QStringLiteral(".csr"),
                   QStringLiteral("-subj"), subject.isEmpty() ? QStringLiteral("/CN=%1").arg(name) : subject })
            && run({ QStringLiteral("x509"), QStringLiteral("-req"), QStringLiteral("-in"),
                name + QStringLiteral(".csr"), QStringLiteral("-CA"), ca + QStringLiteral(".crt"),
                QStringLiteral("-CAkey"), ca + QStringLiteral(".key"), QStringLiteral("-CAcreateserial"),
                QStringLiteral("-out"), name + QStringLiteral(".crt"), QStringLiteral("-days"), QString::number(days),
                QStringLiteral("-extfile"), extensions });
    }

    QTemporaryDir m_temporary;
    QDir m_dir { m_temporary.path() };
    QString m_openssl;
    QString m_error;
};

} // namespace fleetscope::testing
