// cochan: every channel (SPMC, MPMC and one-shot) and their results.
#pragma once

#include <cochan/bind.hpp>
#include <cochan/mpmc.hpp>
#include <cochan/oneshot.hpp>
#include <cochan/result.hpp>
#include <cochan/resumption.hpp>
#include <cochan/select.hpp>
#include <cochan/spmc.hpp>
#include <cochan/stop_token.hpp>
