// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace fleetscope {

// The console's background threads (the map's preparation and its helpers, decoding frames, layouts, rollups, the
// flight recorder, comparisons, exports) run below the GUI thread: on a machine whose cores are busy (two cores, the
// simulator and a million GPUs) the scheduler then gives the GUI thread a core first, and the window is repainted
// when it should be rather than after a stream of frames. Its nice value is raised by backgroundNice over the
// process's; a thread cannot lower it again (that needs privileges), so a pool whose threads may be lowered is used by
// background threads only. Elsewhere than Linux it only records the thread as lowered.
inline constexpr int backgroundNice = 5;

// Lowers the calling thread; once per thread (later calls do nothing).
void runThisThreadInBackground();
// Whether the calling thread was lowered by runThisThreadInBackground.
bool runsInBackground();

} // namespace fleetscope
