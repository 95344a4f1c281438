// cochan: every channel (SPMC and MPMC) and their results.
#pragma once

#include <cochan/mpmc.hpp>
#include <cochan/result.hpp>
#include <cochan/spmc.hpp>
