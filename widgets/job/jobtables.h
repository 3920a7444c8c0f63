// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "model/jobreport.h"

#include <QString>

#include <cstddef>
#include <cstdint>

class QTableWidget;

namespace fleetscope {

// The job page's words and tables: its stragglers ranked and its GPU-hours lost by cause, as the backend ranked them.

// "r01-k02-n03 GPU 5" as the desk names GPUs (Place::name); "GPU 1234" without a topology that holds it.
QString jobGpuName(const Topology *topology, uint32_t gpu);
QString lossCauseName(LossCause cause);
// A metric's value against the job's median with its unit: "SM clock 1,410 vs 1,980 MHz".
QString stragglerShows(const Straggler &s);
// How long before asOf: "3 h 12 min ago", "40 s ago".
QString agoText(int64_t ms, int64_t asOfMs);
// 1,234.5 GPU-hours as "1,234.5"; a fraction of one as "0.42".
QString gpuHoursText(double hours);

// Columns of the tables, so the wall can hide the ones it has no room for.
enum StragglerColumn { RankColumn, GpuColumn, ShowsColumn, HoldBackColumn, SinceColumn, LostColumn, ReasonColumn };
enum LossColumn { CauseColumn, WhatColumn, HoursColumn, ShareColumn };
// Item data roles: the GPU (uint) and the incident (quint64) a row's click activates, on column 0.
constexpr int gpuRole = Qt::UserRole;
constexpr int incidentRole = Qt::UserRole + 1;

QTableWidget *makeJobTable(const QStringList &headers, const QString &name);
// At most `rows` of the report's stragglers, in the order given. topology names their GPUs; null (none, or another
// shape of the fleet than the report's) names them "GPU 1234" and stores no GPU to click.
void fillStragglers(QTableWidget *table, const JobReport &report, const Topology *topology, size_t rows);
void fillLosses(QTableWidget *table, const JobReport &report, const Topology *topology, size_t rows);

} // namespace fleetscope
