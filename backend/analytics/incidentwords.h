// SPDX-License-Identifier: Apache-2.0
#pragma once

#include "common/domains.h"

#include <cstddef>
#include <cstdint>
#include <string>

// The words an incident's headline and evidence are made of (the incident folder's, incidentwords.cpp).
namespace fleetscope::backend::incidentwords {

// "Leaf su03-l5" from "leaf su03-l5".
std::string capitalised(std::string text);
// "leaves", "PDUs": a domain kind's name, more than one.
std::string plural(DomainKind kind);
// "1 node", "3 nodes".
std::string count(size_t n, const char *one, const char *many);
// What a GPU shows, for people: "thermal throttling, link down" (IncidentFolder::Symptom bits).
std::string symptomWords(uint16_t bits);

} // namespace fleetscope::backend::incidentwords
