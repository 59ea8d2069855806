// The boxes drawn around the agents of each scope. A scope's agents need not sit together in the
// hierarchy's tree (a placeholder among the roots, workers under another scope's coordinator), so
// one bounding box would cover other scopes' agents and overlap their boxes. A scope is drawn as
// parts instead: rectangles that together hold all its agents shown (and its nested scopes'
// parts) and cover no other agent. Pure function of the nodes' rectangles: testable alone.
//
// Units: world units. Cost: O(n log n) in the nodes shown plus the agents looked at while growing
// parts (each grow stops at the first agent that is not the scope's). Run at each geometry update.
#pragma once

#include <QRectF>

#include <vector>

namespace mapi::ui {

struct ScopeBoxInput
{
    int parent = -1;              // index of the enclosing scope; -1 for a top scope
    int depth = 0;                // nesting depth (0: top)
    bool deleted = false;
    std::vector<int> members;     // indices into the node rectangles (the nodes shown for its agents; repeats allowed)
};

struct ScopeBoxOutput
{
    std::vector<QRectF> parts;    // padded (less where padding would cover another agent); parts may overlap one another; empty when no member is shown
    QRectF box;                   // the parts' union (bounds, visibility); null when none
};

struct ScopeBoxMetrics
{
    double pad = 10;              // around the agents, and around nested scopes' parts, at most
    double labelBand = 16;        // above a part's agents, for its label, at most
};

// `nodes`: each node's rectangle (shape and label); a null rectangle is a node not shown.
std::vector<ScopeBoxOutput> computeScopeBoxes(const std::vector<QRectF> &nodes, const std::vector<ScopeBoxInput> &scopes,
                                              const ScopeBoxMetrics &metrics = {});

} // namespace mapi::ui
