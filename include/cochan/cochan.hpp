// cochan: everything in the core (SPMC and MPMC channels and their results).
#pragma once

#include <cochan/mpmc.hpp>
#include <cochan/result.hpp>
#include <cochan/spmc.hpp>
